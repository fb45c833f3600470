package authz

import (
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"strconv"
	"strings"
)

// shaVariant is one of Ulrich Drepper's SHA-crypt schemes.
type shaVariant struct {
	magic string
	new   func() hash.Hash
	// order is the digest's bytes in the order they are encoded, three
	// at a time; tail the last one or two, encoded in fewer characters.
	order [][3]int
	tail  []int
}

var (
	sha256Variant = shaVariant{
		magic: "$5$", new: sha256.New,
		order: [][3]int{{0, 10, 20}, {21, 1, 11}, {12, 22, 2}, {3, 13, 23}, {24, 4, 14}, {15, 25, 5}, {6, 16, 26}, {27, 7, 17}, {18, 28, 8}, {9, 19, 29}},
		tail:  []int{31, 30},
	}
	sha512Variant = shaVariant{
		magic: "$6$", new: sha512.New,
		order: [][3]int{
			{0, 21, 42}, {22, 43, 1}, {44, 2, 23}, {3, 24, 45}, {25, 46, 4}, {47, 5, 26}, {6, 27, 48},
			{28, 49, 7}, {50, 8, 29}, {9, 30, 51}, {31, 52, 10}, {53, 11, 32}, {12, 33, 54}, {34, 55, 13},
			{56, 14, 35}, {15, 36, 57}, {37, 58, 16}, {59, 17, 38}, {18, 39, 60}, {40, 61, 19}, {62, 20, 41},
		},
		tail: []int{63},
	}
)

// The rounds SHA-crypt allows, and its default.
const (
	shaRoundsDefault = 5000
	shaRoundsMin     = 1000
	shaRoundsMax     = 999999999
)

// shaCrypt hashes a password as SHA-crypt does with the setting's rounds
// ("rounds=N$", optional) and salt (up to 16 characters, up to a "$").
func shaCrypt(password, setting string, v shaVariant) string {
	rest := strings.TrimPrefix(setting, v.magic)
	rounds, explicit := shaRoundsDefault, false
	if r, ok := strings.CutPrefix(rest, "rounds="); ok {
		digits, after, found := strings.Cut(r, "$")
		n, err := strconv.ParseUint(digits, 10, 64)
		if !found || err != nil {
			return "" // matches no hash: crypt() fails on it
		}
		rounds, explicit, rest = int(min(max(n, shaRoundsMin), shaRoundsMax)), true, after
	}
	salt := rest
	if i := strings.IndexByte(salt, '$'); i >= 0 {
		salt = salt[:i]
	}
	if len(salt) > 16 {
		salt = salt[:16]
	}
	pw, s := []byte(password), []byte(salt)

	b := v.new()
	b.Write(pw)
	b.Write(s)
	b.Write(pw)
	bSum := b.Sum(nil)
	size := len(bSum)

	a := v.new()
	a.Write(pw)
	a.Write(s)
	n := len(pw)
	for ; n > size; n -= size {
		a.Write(bSum)
	}
	a.Write(bSum[:n])
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 != 0 {
			a.Write(bSum)
		} else {
			a.Write(pw)
		}
	}
	aSum := a.Sum(nil)

	dp := v.new()
	for range len(pw) {
		dp.Write(pw)
	}
	p := repeatTo(dp.Sum(nil), len(pw))

	ds := v.new()
	for range 16 + int(aSum[0]) {
		ds.Write(s)
	}
	sp := repeatTo(ds.Sum(nil), len(s))

	c := aSum
	for i := range rounds {
		h := v.new()
		if i&1 != 0 {
			h.Write(p)
		} else {
			h.Write(c)
		}
		if i%3 != 0 {
			h.Write(sp)
		}
		if i%7 != 0 {
			h.Write(p)
		}
		if i&1 != 0 {
			h.Write(c)
		} else {
			h.Write(p)
		}
		c = h.Sum(c[:0])
	}

	out := []byte(v.magic)
	if explicit {
		out = append(append(out, "rounds="+strconv.Itoa(rounds)...), '$')
	}
	out = append(append(out, s...), '$')
	for _, g := range v.order {
		out = to64(out, uint32(c[g[0]])<<16|uint32(c[g[1]])<<8|uint32(c[g[2]]), 4)
	}
	if len(v.tail) == 2 {
		out = to64(out, uint32(c[v.tail[0]])<<8|uint32(c[v.tail[1]]), 3)
	} else {
		out = to64(out, uint32(c[v.tail[0]]), 2)
	}
	return string(out)
}

// repeatTo is sum repeated, then cut, to n bytes.
func repeatTo(sum []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, sum[:min(len(sum), n-len(out))]...)
	}
	return out
}
