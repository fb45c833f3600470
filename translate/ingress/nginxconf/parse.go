// Package nginxconf parses an nginx configuration fragment, such as the
// text of an ingress-nginx snippet annotation, into a tree of directives.
// It is a port of nginx's own tokenizer (ngx_conf_read_token in
// src/core/ngx_conf_file.c) and of the block structure ngx_conf_parse
// builds on it, so that a snippet reads here as nginx reads it; it never
// touches the filesystem and follows no include.
//
// What it parses: directives separated by whitespace and ended by ";", or
// opening a block with "{" closed by "}"; "#" comments to the end of the
// line when "#" starts a token; single- and double-quoted arguments, where
// a backslash keeps the next character from ending the token; and, in
// every argument, nginx's escapes (\" \' \\ \t \r \n; any other backslash
// stays as written). "$var" and "${var}" stay as text: a "{" right after
// "$" belongs to the token, any other unquoted "{" opens a block, which is
// why nginx (and this parser) splits an unquoted regex such as
// ^/v[0-9]{1,2}/ and a regex holding "{", "}" or ";" must be quoted.
//
// What it refuses, with the line: a "}" the fragment did not open (in
// nginx.conf it would close the surrounding location or server), a block
// or a quote left open, a last directive without ";", a ";" or "{" with no
// directive, a character glued to a closing quote, a token longer than
// nginx's 4 KiB configuration buffer, blocks nested deeper than MaxDepth
// and input longer than MaxSize. It knows no directive: whether a name
// exists, takes a block or its arguments is the translator's business.
//
// One module's blocks are not nginx syntax: lua-nginx-module, which
// ingress-nginx builds in, reads the block of every *_by_lua_block
// directive with a Lua lexer of its own (ngx_http_lua_conf_lua_block_parse)
// and keeps its text. So does this parser: Directive.Lua holds that text,
// found by counting braces outside Lua strings, long brackets and
// comments as that lexer does.
package nginxconf

import (
	"fmt"
	"strings"
)

const (
	// MaxSize bounds the fragment, in bytes. ingress-nginx's annotation
	// values are bounded likewise; nothing legitimate comes near it.
	MaxSize = 64 << 10
	// MaxDepth bounds the nesting of blocks: a directive at the top of
	// the fragment is at depth 0, one in its block at depth 1.
	MaxDepth = 16
	// MaxToken bounds one token (a word, or the text of a quoted string,
	// or a comment) in bytes: nginx reads its configuration through a
	// 4096-byte buffer and refuses a token that fills it ("too long
	// parameter").
	MaxToken = 4095
)

// Directive is one directive of the fragment: its name and arguments as
// nginx's tokenizer delivers them, and its block if it has one.
type Directive struct {
	Name string
	// Args are the arguments with quotes removed and escapes applied.
	// Parentheses stay as nginx leaves them: `if ($a = "b")` has the
	// arguments "($a", "=", "b" and ")".
	Args []string
	// Quoted says, for each of Args, whether it was written in quotes;
	// nginx treats some quoted arguments differently (an if condition's
	// "~" against "\"~\"", a quoted regex).
	Quoted []bool
	// Line is the 1-based line of the directive's name in the fragment.
	Line int
	// Block is the block's directives: nil when the directive ends with
	// ";", non-nil (maybe empty) when it opens a block. A Lua block
	// (IsLua) has no Block but its text in Lua.
	Block []Directive
	// Lua is the code between the braces of a *_by_lua_block directive,
	// as written.
	Lua string
}

// IsLua says whether d is one of lua-nginx-module's *_by_lua_block
// directives, whose block is Lua code (d.Lua), not directives.
func (d Directive) IsLua() bool { return isLua(d.Name) }

func isLua(name string) bool { return strings.HasSuffix(name, "_by_lua_block") }

// Error is a fragment nginx would refuse, with the line nginx would name.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse parses a fragment: the directives of a server or location block,
// with no block around them.
func Parse(src string) ([]Directive, error) {
	if len(src) > MaxSize {
		return nil, &Error{Line: 1, Msg: fmt.Sprintf("snippet of %d bytes, longer than %d", len(src), MaxSize)}
	}
	p := &parser{lx: lexer{src: src, line: 1}}
	return p.block(0, 0)
}

type parser struct {
	lx lexer
}

// block reads directives until the "}" closing a block opened at depth
// (openLine its line) or, at depth 0, until the end of the fragment.
func (p *parser) block(depth, openLine int) ([]Directive, error) {
	out := []Directive{}
	for {
		words, term, err := p.lx.token()
		if err != nil {
			return nil, err
		}
		switch term {
		case termEOF:
			if depth > 0 {
				return nil, &Error{Line: p.lx.line, Msg: fmt.Sprintf(`unexpected end of snippet, expecting "}" for the block opened on line %d`, openLine)}
			}
			return out, nil
		case termBlockDone:
			if depth == 0 {
				return nil, &Error{Line: p.lx.line, Msg: `unexpected "}": it closes a block the snippet did not open`}
			}
			return out, nil
		}
		d := Directive{Name: words[0].val, Line: words[0].line}
		if n := len(words) - 1; n > 0 {
			d.Args = make([]string, n)
			d.Quoted = make([]bool, n)
			for i, w := range words[1:] {
				d.Args[i], d.Quoted[i] = w.val, w.quoted
			}
		}
		switch {
		case isLua(d.Name) && term != termBlockStart:
			return nil, &Error{Line: p.lx.line, Msg: fmt.Sprintf("directive %q has no opening \"{\"", d.Name)}
		case isLua(d.Name):
			if d.Lua, err = p.lx.lua(); err != nil {
				return nil, err
			}
		case term == termBlockStart:
			if depth+1 > MaxDepth {
				return nil, &Error{Line: p.lx.line, Msg: fmt.Sprintf("blocks nested deeper than %d", MaxDepth)}
			}
			if d.Block, err = p.block(depth+1, p.lx.line); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
	}
}

// What ended a token read.
const (
	termSemicolon  = iota // ";": a simple directive
	termBlockStart        // "{"
	termBlockDone         // "}"
	termEOF
)

type word struct {
	val    string
	quoted bool
	line   int
}

type lexer struct {
	src  string
	pos  int
	line int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// token reads one directive's words and what ended them. It follows
// ngx_conf_read_token state for state; the comments name nginx's flags.
func (l *lexer) token() ([]word, int, error) {
	var (
		words                       []word
		needSpace, sharpComment     bool
		variable, escaped           bool // nginx's variable, quoted
		sQuoted, dQuoted            bool
		lastSpace                   = true
		start, startLine, quoteLine = l.pos, l.line, 0
	)
	for {
		if l.pos >= len(l.src) {
			if len(words) > 0 || !lastSpace {
				if sQuoted || dQuoted {
					return nil, 0, &Error{Line: l.line, Msg: fmt.Sprintf("unexpected end of snippet inside the quoted string opened on line %d", quoteLine)}
				}
				return nil, 0, &Error{Line: l.line, Msg: `unexpected end of snippet, expecting ";" or "{"`}
			}
			return nil, termEOF, nil
		}
		if (!lastSpace || sharpComment) && l.pos-start > MaxToken {
			return nil, 0, &Error{Line: startLine, Msg: fmt.Sprintf("too long parameter: a token or comment longer than %d bytes", MaxToken)}
		}
		ch := l.src[l.pos]
		l.pos++
		if ch == '\n' {
			l.line++
			sharpComment = false
		}
		if sharpComment {
			continue
		}
		if escaped {
			escaped = false
			continue
		}
		if needSpace {
			if isSpace(ch) {
				lastSpace, needSpace = true, false
				continue
			}
			switch ch {
			case ';':
				return words, termSemicolon, nil
			case '{':
				return words, termBlockStart, nil
			case ')':
				lastSpace, needSpace = true, false
			default:
				return nil, 0, &Error{Line: l.line, Msg: fmt.Sprintf("unexpected %q right after a closing quote", ch)}
			}
		}
		if lastSpace {
			if isSpace(ch) {
				continue
			}
			start, startLine = l.pos-1, l.line
			switch ch {
			case ';', '{':
				if len(words) == 0 {
					return nil, 0, &Error{Line: l.line, Msg: fmt.Sprintf("unexpected %q with no directive before it", ch)}
				}
				if ch == '{' {
					return words, termBlockStart, nil
				}
				return words, termSemicolon, nil
			case '}':
				if len(words) != 0 {
					return nil, 0, &Error{Line: l.line, Msg: `unexpected "}": the directive before it has no ";"`}
				}
				return nil, termBlockDone, nil
			case '#':
				sharpComment = true
				continue
			case '\\':
				escaped, lastSpace = true, false
				continue
			case '"', '\'':
				start++
				dQuoted, sQuoted = ch == '"', ch == '\''
				quoteLine, lastSpace = l.line, false
				continue
			case '$':
				variable, lastSpace = true, false
				continue
			}
			lastSpace = false
			continue
		}
		if ch == '{' && variable {
			continue
		}
		variable = false
		if ch == '\\' {
			escaped = true
			continue
		}
		if ch == '$' {
			variable = true
			continue
		}
		found := false
		switch {
		case dQuoted:
			if ch == '"' {
				dQuoted, needSpace, found = false, true, true
			}
		case sQuoted:
			if ch == '\'' {
				sQuoted, needSpace, found = false, true, true
			}
		case isSpace(ch) || ch == ';' || ch == '{':
			lastSpace, found = true, true
		}
		if !found {
			continue
		}
		words = append(words, word{val: unescape(l.src[start : l.pos-1]), quoted: needSpace, line: startLine})
		switch {
		case needSpace:
			// A closing quote: the terminator is read next.
		case ch == ';':
			return words, termSemicolon, nil
		case ch == '{':
			return words, termBlockStart, nil
		}
	}
}

// unescape applies nginx's escapes to a token's raw text: \" \' \\ lose
// the backslash, \t \r \n become the control characters, and any other
// backslash stays.
func unescape(raw string) string {
	if strings.IndexByte(raw, '\\') < 0 {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) {
			switch raw[i+1] {
			case '"', '\'', '\\':
				i++
				c = raw[i]
			case 't':
				i++
				c = '\t'
			case 'r':
				i++
				c = '\r'
			case 'n':
				i++
				c = '\n'
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// lua reads a Lua block's text after its "{" up to the matching "}", as
// lua-nginx-module's lexer does: braces count outside "..." and '...'
// strings (a backslash escapes the next byte), [[...]] and [=[...]=] long
// strings, --[[...]] long comments and -- comments to the end of the line.
func (l *lexer) lua() (string, error) {
	start, startLine, level := l.pos, l.line, 1
	src := l.src
	for l.pos < len(src) {
		ch := src[l.pos]
		switch {
		case ch == '{':
			level++
		case ch == '}':
			level--
			if level == 0 {
				l.pos++
				return src[start : l.pos-1], nil
			}
		case ch == '"' || ch == '\'':
			i := l.pos + 1
			for i < len(src) && src[i] != ch {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(src) {
				return "", &Error{Line: l.line, Msg: "unexpected end of snippet inside a Lua string"}
			}
			l.advance(i + 1)
			continue
		case ch == '-' && strings.HasPrefix(src[l.pos:], "--"):
			if n := longBracket(src[l.pos+2:]); n > 0 {
				if err := l.skipLong(l.pos+2, n); err != nil {
					return "", err
				}
				continue
			}
			end := strings.IndexByte(src[l.pos:], '\n')
			if end < 0 {
				l.advance(len(src))
				continue
			}
			l.advance(l.pos + end + 1)
			continue
		case ch == '[':
			if n := longBracket(src[l.pos:]); n > 0 {
				if err := l.skipLong(l.pos, n); err != nil {
					return "", err
				}
				continue
			}
		}
		l.advance(l.pos + 1)
	}
	return "", &Error{Line: l.line, Msg: fmt.Sprintf("unexpected end of snippet, expecting the \"}\" closing the Lua block opened on line %d", startLine)}
}

// advance moves to pos, counting lines.
func (l *lexer) advance(pos int) {
	l.line += strings.Count(l.src[l.pos:pos], "\n")
	l.pos = pos
}

// longBracket returns the length of the Lua long bracket [=*[ s starts
// with, or 0.
func longBracket(s string) int {
	if s == "" || s[0] != '[' {
		return 0
	}
	i := 1
	for i < len(s) && s[i] == '=' {
		i++
	}
	if i < len(s) && s[i] == '[' {
		return i + 1
	}
	return 0
}

// skipLong moves past the long string or comment whose opening bracket of
// n bytes starts at open.
func (l *lexer) skipLong(open, n int) error {
	closing := "]" + strings.Repeat("=", n-2) + "]"
	end := strings.Index(l.src[open+n:], closing)
	if end < 0 {
		return &Error{Line: l.line, Msg: fmt.Sprintf("Lua code block missing the closing long bracket %q", closing)}
	}
	l.advance(open + n + end + len(closing))
	return nil
}
