package authz

// Traditional DES crypt(3), the Seventh Edition Unix scheme that nginx's
// crypt() (the C library's: musl in ingress-nginx's Alpine image, glibc's
// libxcrypt elsewhere) verifies for a hash of 13 characters with no scheme
// prefix: 2 characters of salt, then 11 of the encoded result.
//
// The scheme: the key is the low 7 bits of each of the password's first 8
// bytes (up to a NUL, where C's string ends; the rest is ignored); the 12
// bits of the salt each swap two bits of DES's E expansion; a zero block is
// enciphered 25 times with that modified DES; the 64-bit result is written
// as 11 characters of crypt's alphabet, 6 bits each from the most
// significant, the last holding 4. Go's crypto/des has no salted E, so the
// rounds are written here, from the tables of the DES standard (FIPS 46-3).
// Bit numbers in the tables are the standard's: 1 is the most significant.

// saltValue is a salt character's 6 bits as the C library takes them: its
// place in crypt's alphabet. musl (the C library of ingress-nginx's Alpine
// image) takes any other byte too, by the same arithmetic on its value as a
// signed char (libxcrypt refuses such a salt).
func saltValue(c byte) int {
	v := int(int8(c))
	switch {
	case v >= 'a':
		v -= 'a' - 38
	case v >= 'A':
		v -= 'A' - 12
	default:
		v -= '.'
	}
	return v & 0x3f
}

// desCrypt is crypt(3) of password with the salt of the first two bytes
// of setting, or BSDi's extended scheme for a setting that starts with "_"
// (authzapi.DESCrypt says which settings are DES crypt's).
func desCrypt(password, setting string) string {
	if setting[0] == '_' {
		return bsdiCrypt(password, setting)
	}
	key, _ := desKey(password)
	salt := saltValue(setting[0]) | saltValue(setting[1])<<6
	subkeys := desSubkeys(key)
	var block uint64
	mask := desSaltMask(salt)
	for range 25 {
		block = desEncrypt(block, &subkeys, mask)
	}
	return string(appendDES64(append(make([]byte, 0, 13), setting[:2]...), block))
}

// desKey is the DES key of a password's first 8 bytes, each shifted left
// once (dropping its eighth bit; DES ignores the low, parity, bit of each
// key byte), zeros from a NUL on, where C's string ends; and the rest of
// the password after those 8 bytes ("" at a NUL).
func desKey(password string) (uint64, string) {
	var key uint64
	for i := range 8 {
		var c byte
		if i < len(password) {
			c = password[i]
		}
		if c == 0 {
			password = ""
		}
		key = key<<8 | uint64(c<<1)
	}
	if len(password) <= 8 {
		return key, ""
	}
	return key, password[8:]
}

// desSaltMask is the E-expansion perturbation of a salt of up to 24 bits:
// salt bit k (from the least significant) swaps bits k+1 and k+25 of E's
// 48-bit output, in the standard's numbering; the mask holds, for each,
// the lower bit of the pair.
func desSaltMask(salt int) uint64 {
	var mask uint64
	for k := range 24 {
		if salt>>k&1 != 0 {
			mask |= 1 << (23 - k)
		}
	}
	return mask
}

// appendDES64 appends the 11 characters of a 64-bit result: 66 bits, the
// 64 and two zero bits, 6 at a time from the top.
func appendDES64(out []byte, block uint64) []byte {
	for shift := 58; shift >= -2; shift -= 6 {
		var v uint64
		if shift >= 0 {
			v = block >> shift
		} else {
			v = block << -shift
		}
		out = append(out, cryptAlphabet[v&0x3f])
	}
	return out
}

// desEncrypt enciphers one 64-bit block with the 16 subkeys, E's output
// perturbed by saltMask (zero is the standard's DES).
func desEncrypt(block uint64, subkeys *[16]uint64, saltMask uint64) uint64 {
	block = permute(block, 64, desIP[:])
	l, r := uint32(block>>32), uint32(block)
	for _, k := range subkeys {
		l, r = r, l^desF(r, k, saltMask)
	}
	// The last round does not swap: R16 then L16 go to the final permutation.
	return permute(uint64(r)<<32|uint64(l), 64, desFP[:])
}

// desF is DES's cipher function f of R and a subkey.
func desF(r uint32, subkey, saltMask uint64) uint32 {
	e := permute(uint64(r), 32, desE[:])
	// Swap the bit pairs the salt selects: bit b (from the least
	// significant) of the lower half with bit b+24.
	t := (e>>24 ^ e) & saltMask
	e ^= t | t<<24
	e ^= subkey
	var s uint32
	for i := range 8 {
		six := e >> (42 - 6*i) & 0x3f
		row := six>>4&2 | six&1
		col := six >> 1 & 0xf
		s = s<<4 | uint32(desS[i][row*16+col])
	}
	return uint32(permute(uint64(s), 32, desP[:]))
}

// desSubkeys is DES's key schedule: PC-1, then for each round the two
// 28-bit halves rotated left and PC-2.
func desSubkeys(key uint64) [16]uint64 {
	cd := permute(key, 64, desPC1[:])
	c, d := uint32(cd>>28), uint32(cd&0xfffffff)
	rotate := func(x uint32, n uint) uint32 { return (x<<n | x>>(28-n)) & 0xfffffff }
	var out [16]uint64
	for i, n := range desShifts {
		c, d = rotate(c, uint(n)), rotate(d, uint(n))
		out[i] = permute(uint64(c)<<28|uint64(d), 56, desPC2[:])
	}
	return out
}

// permute builds a value of len(table) bits whose bit i (from the most
// significant, 1-based as the standard numbers them) is bit table[i] of
// in, an inBits-bit value.
func permute(in uint64, inBits int, table []byte) uint64 {
	var out uint64
	for _, p := range table {
		out = out<<1 | in>>(inBits-int(p))&1
	}
	return out
}

// The tables of FIPS 46-3.
var (
	desIP = [64]byte{
		58, 50, 42, 34, 26, 18, 10, 2,
		60, 52, 44, 36, 28, 20, 12, 4,
		62, 54, 46, 38, 30, 22, 14, 6,
		64, 56, 48, 40, 32, 24, 16, 8,
		57, 49, 41, 33, 25, 17, 9, 1,
		59, 51, 43, 35, 27, 19, 11, 3,
		61, 53, 45, 37, 29, 21, 13, 5,
		63, 55, 47, 39, 31, 23, 15, 7,
	}
	desFP = [64]byte{
		40, 8, 48, 16, 56, 24, 64, 32,
		39, 7, 47, 15, 55, 23, 63, 31,
		38, 6, 46, 14, 54, 22, 62, 30,
		37, 5, 45, 13, 53, 21, 61, 29,
		36, 4, 44, 12, 52, 20, 60, 28,
		35, 3, 43, 11, 51, 19, 59, 27,
		34, 2, 42, 10, 50, 18, 58, 26,
		33, 1, 41, 9, 49, 17, 57, 25,
	}
	desE = [48]byte{
		32, 1, 2, 3, 4, 5,
		4, 5, 6, 7, 8, 9,
		8, 9, 10, 11, 12, 13,
		12, 13, 14, 15, 16, 17,
		16, 17, 18, 19, 20, 21,
		20, 21, 22, 23, 24, 25,
		24, 25, 26, 27, 28, 29,
		28, 29, 30, 31, 32, 1,
	}
	desP = [32]byte{
		16, 7, 20, 21, 29, 12, 28, 17,
		1, 15, 23, 26, 5, 18, 31, 10,
		2, 8, 24, 14, 32, 27, 3, 9,
		19, 13, 30, 6, 22, 11, 4, 25,
	}
	desPC1 = [56]byte{
		57, 49, 41, 33, 25, 17, 9,
		1, 58, 50, 42, 34, 26, 18,
		10, 2, 59, 51, 43, 35, 27,
		19, 11, 3, 60, 52, 44, 36,
		63, 55, 47, 39, 31, 23, 15,
		7, 62, 54, 46, 38, 30, 22,
		14, 6, 61, 53, 45, 37, 29,
		21, 13, 5, 28, 20, 12, 4,
	}
	desPC2 = [48]byte{
		14, 17, 11, 24, 1, 5,
		3, 28, 15, 6, 21, 10,
		23, 19, 12, 4, 26, 8,
		16, 7, 27, 20, 13, 2,
		41, 52, 31, 37, 47, 55,
		30, 40, 51, 45, 33, 48,
		44, 49, 39, 56, 34, 53,
		46, 42, 50, 36, 29, 32,
	}
	desShifts = [16]byte{1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1}
	// desS are the eight S-boxes, each 4 rows of 16.
	desS = [8][64]byte{
		{
			14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7,
			0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8,
			4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0,
			15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13,
		},
		{
			15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10,
			3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5,
			0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15,
			13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9,
		},
		{
			10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8,
			13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1,
			13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7,
			1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12,
		},
		{
			7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15,
			13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9,
			10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4,
			3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14,
		},
		{
			2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9,
			14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6,
			4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14,
			11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3,
		},
		{
			12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11,
			10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8,
			9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6,
			4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13,
		},
		{
			4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1,
			13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6,
			1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2,
			6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12,
		},
		{
			13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7,
			1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2,
			7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8,
			2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11,
		},
	}
)
