package annotations

// mirrorKeys lists ingress-nginx's mirror keys, for table (keys_mirror.go
// defines them once they are honoured).
func mirrorKeys() []*definition { return nil }
