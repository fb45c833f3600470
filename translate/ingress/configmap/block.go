package configmap

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// blockHeaders are the headers of block-user-agents and block-referers.
var blockHeaders = map[string]string{"block-user-agents": "user-agent", "block-referers": "referer"}

// blockKeys are the block-* keys read, until Parse makes the listeners'
// block of them.
type blockKeys map[string]ir.HeaderBlock // by header

// block reads block-user-agents or block-referers as ingress-nginx writes
// them into its map of $http_user_agent or $http_referer: the list split at
// commas and trimmed, each entry a map key of nginx's configuration (an
// nginx token, quoted or not; ~ a case-sensitive regular expression, ~* a
// case-insensitive one, else a string matched whole, ignoring case;
// default: every request). An entry ingress-xds cannot apply as nginx
// would (an expression RE2 cannot take, a token nginx would reject) is
// an access control not applied: every Ingress is refused until it is
// fixed, never served without the block.
func block(_ *Table, s *Settings, name, value string) error {
	h := ir.HeaderBlock{Header: blockHeaders[name]}
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if err := addBlockEntry(&h, entry); err != nil {
			s.Defaults.RefuseAll(name, fmt.Sprintf("%s: %q: %v", name, entry, err))
			return fmt.Errorf("%q: %v: every Ingress is refused until it is fixed (an access control fails closed)", entry, err)
		}
	}
	if len(h.Values) == 0 && len(h.Regexes) == 0 && !h.All {
		return nil
	}
	if s.blocks == nil {
		s.blocks = blockKeys{}
	}
	s.blocks[h.Header] = h
	return nil
}

// addBlockEntry adds one map key to h, as ngx_http_map reads it.
func addBlockEntry(h *ir.HeaderBlock, entry string) error {
	if !utf8.ValidString(entry) {
		return errors.New("bytes that are not UTF-8, which Envoy's configuration cannot hold")
	}
	key, err := nginxToken(entry)
	if err != nil {
		return err
	}
	switch {
	case key == "default":
		h.All = true // map's default 1: every value
	case key == "include":
		return errors.New("nginx would read a file of that name: not applied")
	case strings.HasPrefix(key, "~"):
		expr, caseless := key[1:], false
		if strings.HasPrefix(expr, "*") {
			expr, caseless = expr[1:], true
		}
		if expr == "" {
			expr = "(?:)"
		}
		if caseless {
			expr = "(?i)" + expr
		}
		if len(expr) > ir.MaxRegexLength {
			return fmt.Errorf("an expression over %d bytes", ir.MaxRegexLength)
		}
		if _, err := regexp.Compile(expr); err != nil {
			return fmt.Errorf("a regular expression RE2 cannot take (PCRE's look-arounds, backreferences and possessive forms are not RE2's): %v", err)
		}
		if !slices.Contains(h.Regexes, expr) {
			h.Regexes = append(h.Regexes, expr)
		}
	default:
		key = strings.TrimPrefix(key, `\`) // nginx's escape of a special name
		if !slices.Contains(h.Values, key) {
			h.Values = append(h.Values, key)
		}
	}
	return nil
}

// nginxToken is entry as nginx's configuration parser reads one token of
// it: quoted ("..." or '...') or not, with \", \', \\, \t, \r and \n
// unescaped and any other backslash kept. What would not be one token
// (a space, ;, { or } unescaped, a comment) is an error: nginx would not
// load such a configuration.
func nginxToken(entry string) (string, error) {
	body, quote := entry, byte(0)
	if c := entry[0]; c == '"' || c == '\'' {
		if len(entry) < 2 || entry[len(entry)-1] != c {
			return "", errors.New("an unterminated quoted string")
		}
		body, quote = entry[1:len(entry)-1], c
	} else if c == '#' {
		return "", errors.New("nginx would read it as a comment")
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) {
			i++
			switch n := body[i]; n {
			case '"', '\'', '\\':
				b.WriteByte(n)
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'n':
				b.WriteByte('\n')
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
			continue
		}
		if quote != 0 && c == quote {
			return "", errors.New("a quote inside a quoted string")
		}
		if quote == 0 && (c == ' ' || c == '\t' || c == ';' || c == '{' || c == '}') {
			return "", fmt.Errorf("%q would end nginx's token (escape it, or quote the entry)", c)
		}
		b.WriteByte(c)
	}
	if strings.ContainsAny(b.String(), "\r\n\x00") {
		return "", errors.New("a control character no header value holds")
	}
	return b.String(), nil
}

// requestBlock is the listeners' block of the keys read; nil: none.
func (k blockKeys) requestBlock() *ir.RequestBlock {
	if len(k) == 0 {
		return nil
	}
	b := &ir.RequestBlock{}
	for _, name := range slices.Sorted(maps.Keys(k)) {
		b.Headers = append(b.Headers, k[name])
	}
	return b
}
