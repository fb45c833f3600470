package authz

// BSDi's extended DES crypt, which both C libraries nginx is built on
// verify (musl in ingress-nginx's Alpine image, libxcrypt): a hash of 20
// characters, "_", 4 of iteration count, 4 of salt, 11 of result. Unlike
// the traditional scheme every byte of the password counts: the key of its
// first 8 bytes is folded with each next 8 (the key enciphered under itself
// once, unsalted, then XORed with them), the salt has 24 bits, and the zero
// block is enciphered count times.

// bsdiCrypt is the extended scheme of password with setting's count and
// salt (authzapi.DESCrypt has checked its characters: of crypt's alphabet,
// a count that is not zero).
func bsdiCrypt(password, setting string) string {
	count, salt := bsdiField(setting[1:5]), bsdiField(setting[5:9])
	key, rest := desKey(password)
	subkeys := desSubkeys(key)
	for rest != "" {
		key = desEncrypt(key, &subkeys, 0)
		var next uint64
		next, rest = desKey(rest)
		// desKey pads with zeros: XOR leaves the bytes past the
		// password's end as they were.
		key ^= next
		subkeys = desSubkeys(key)
	}
	var block uint64
	mask := desSaltMask(salt)
	for range count {
		block = desEncrypt(block, &subkeys, mask)
	}
	return string(appendDES64(append(make([]byte, 0, 20), setting[:9]...), block))
}

// bsdiField is 4 characters of crypt's alphabet as 24 bits, the first the
// least significant.
func bsdiField(s string) int {
	v := 0
	for i := len(s) - 1; i >= 0; i-- {
		v = v<<6 | saltValue(s[i])
	}
	return v
}
