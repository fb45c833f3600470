package nginxconf

import "strings"

// Print writes directives in canonical nginx syntax: one directive a line,
// blocks indented by four spaces, each argument unquoted when it was
// unquoted and can be written so, double-quoted otherwise, control
// characters as \t \r \n, a Lua block's text as it was. Comments are
// not kept. Parse(Print(ds)) gives ds back, lines aside, for any ds that
// Parse returned.
func Print(ds []Directive) string {
	var b strings.Builder
	printBlock(&b, ds, 0)
	return b.String()
}

// String prints the directive and its block as Print does.
func (d Directive) String() string { return Print([]Directive{d}) }

func printBlock(b *strings.Builder, ds []Directive, depth int) {
	for _, d := range ds {
		indent := strings.Repeat("    ", depth)
		b.WriteString(indent)
		writeArg(b, d.Name, false)
		for i, a := range d.Args {
			b.WriteByte(' ')
			writeArg(b, a, i < len(d.Quoted) && d.Quoted[i])
		}
		if d.IsLua() {
			b.WriteString(" {")
			b.WriteString(d.Lua)
			b.WriteString("}\n")
			continue
		}
		if d.Block == nil {
			b.WriteString(";\n")
			continue
		}
		b.WriteString(" {\n")
		printBlock(b, d.Block, depth+1)
		b.WriteString(indent)
		b.WriteString("}\n")
	}
}

func writeArg(b *strings.Builder, v string, quoted bool) {
	if !quoted {
		if raw, ok := bare(v); ok {
			b.WriteString(raw)
			return
		}
	}
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// bare writes v as an unquoted token that the tokenizer reads back as v,
// or says it cannot: an empty value, one starting with "#" or "}", or one
// holding a space, ";" or a "{" not right after "$" needs quotes.
func bare(v string) (string, bool) {
	if v == "" || v[0] == '#' || v[0] == '}' {
		return "", false
	}
	var b strings.Builder
	variable := false // as the tokenizer's: the last token byte was "$" (or a "{" after it)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			// A backslash before a byte that unescape would not touch is
			// written as is, with that byte: the tokenizer skips the
			// byte, unescape keeps both. Otherwise it is doubled.
			if i+1 < len(v) && !escapable(v[i+1]) {
				b.WriteByte('\\')
				b.WriteByte(v[i+1])
				i++
			} else {
				b.WriteString(`\\`)
			}
			variable = false
			continue
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case '"', '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case ' ', ';':
			return "", false
		case '{':
			if !variable {
				return "", false
			}
			b.WriteByte(c)
			continue
		default:
			b.WriteByte(c)
		}
		variable = c == '$'
	}
	return b.String(), true
}

// escapable says whether unescape gives "\\" followed by c a meaning, or
// c is a control character written as an escape.
func escapable(c byte) bool {
	switch c {
	case '"', '\'', '\\', 't', 'r', 'n', '\t', '\r', '\n':
		return true
	}
	return false
}
