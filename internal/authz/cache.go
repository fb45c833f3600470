package authz

import (
	"crypto/sha256"
	"sync"
	"time"
)

// CacheOptions bound the verification cache.
type CacheOptions struct {
	// Entries is how many verifications are remembered at most; 0 turns
	// the cache off.
	Entries int
	// TTL is how long one is remembered.
	TTL time.Duration
	// now is the clock; time.Now when nil (tests set it).
	now func() time.Time
}

// DefaultCacheOptions are the service's defaults: room for the clients of
// a busy Envoy, and entries that live a minute (an entry cannot outlive a
// password change: see verifications).
func DefaultCacheOptions() CacheOptions {
	return CacheOptions{Entries: 10000, TTL: time.Minute}
}

// verifications remembers which credentials matched which stored hash, so
// that a client sending the same credentials request after request costs
// one slow verification (bcrypt is deliberately slow: tens of
// milliseconds), not one per request.
//
// Why it is safe: an entry is the SHA-256 of the stored hash, the user and
// the password presented, and exists only for a successful verification.
// It matches only the very same credentials against the very same stored
// hash: a changed password has another hash and misses; a removed user is
// not found in the user file before the cache is asked; a wrong password
// gives another digest (finding one that collides is finding a SHA-256
// collision). The cache holds digests, never passwords. Someone who could
// read the service's memory could guess passwords against those digests
// faster than against bcrypt; but they could as well read the passwords
// themselves, in the Authorization headers passing through the service and
// Envoy. Entries live a minute, which also keeps the map small.
type verifications struct {
	o       CacheOptions
	mu      sync.Mutex
	entries map[[sha256.Size]byte]time.Time // when each expires
}

func newVerifications(o CacheOptions) *verifications {
	if o.now == nil {
		o.now = time.Now
	}
	return &verifications{o: o, entries: map[[sha256.Size]byte]time.Time{}}
}

// key is the digest of one verification's inputs, each length-prefixed so
// that no two different triples share an encoding.
func verificationKey(hash, user, password string) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{hash, user, password} {
		var n [8]byte
		l := uint64(len(s))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// verified says whether the key was remembered and has not expired.
func (v *verifications) verified(k [sha256.Size]byte) bool {
	if v.o.Entries == 0 {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	exp, ok := v.entries[k]
	if ok && v.o.now().After(exp) {
		delete(v.entries, k)
		return false
	}
	return ok
}

// remember records a successful verification. A full cache first drops
// its expired entries, then, if still full, arbitrary ones: a dropped entry
// only costs one more verification.
func (v *verifications) remember(k [sha256.Size]byte) {
	if v.o.Entries == 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.o.now()
	if len(v.entries) >= v.o.Entries {
		for e, exp := range v.entries {
			if now.After(exp) {
				delete(v.entries, e)
			}
		}
		for e := range v.entries {
			if len(v.entries) < v.o.Entries {
				break
			}
			delete(v.entries, e)
		}
	}
	v.entries[k] = now.Add(v.o.TTL)
}

// len is the number of entries, for tests.
func (v *verifications) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.entries)
}
