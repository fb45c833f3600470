package gatewayapi

// EditsOf counts the builds a Builder made by editing the last one
// (incremental.go), for the tests to see that the series exercised it.
func EditsOf(b *Builder) int { return b.edits }
