package configmap

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// block-user-agents and block-referers are read as ingress-nginx writes
// them into its map (settings/global_access_block.go's values among
// them): strings, ~ and ~* expressions, quoted tokens, default; what
// nginx or RE2 cannot take refuses every Ingress.
func TestBlockKeys(t *testing.T) {
	tab := New(annotations.New(""))
	for _, c := range []struct {
		value string
		want  ir.HeaderBlock // zero with err: refused
		err   string
	}{
		{`~*chrome\/68\.0\.3440\.106\ safari\/537\.36,AlphaBot`, ir.HeaderBlock{Header: "user-agent", Values: []string{"AlphaBot"},
			Regexes: []string{`(?i)chrome\/68\.0\.3440\.106\ safari\/537\.36`}}, ""},
		{` ~Bot , ~Bot, AlphaBot , alphabot,, `, ir.HeaderBlock{Header: "user-agent", Values: []string{"AlphaBot", "alphabot"}, Regexes: []string{"Bot"}}, ""},
		{`"", 'Mozilla 5', "a\"b", \default`, ir.HeaderBlock{Header: "user-agent", Values: []string{"", "Mozilla 5", `a"b`, "default"}}, ""},
		{`default`, ir.HeaderBlock{Header: "user-agent", All: true}, ""},
		{`~`, ir.HeaderBlock{Header: "user-agent", Regexes: []string{"(?:)"}}, ""},
		{`~(?<=x)bot`, ir.HeaderBlock{}, "RE2 cannot take"},
		{`~(a)\1`, ir.HeaderBlock{}, "RE2 cannot take"},
		{`Mozilla 5`, ir.HeaderBlock{}, "would end nginx's token"},
		{`bot;deny`, ir.HeaderBlock{}, "would end nginx's token"},
		{`"unterminated`, ir.HeaderBlock{}, "unterminated"},
		{`#bot`, ir.HeaderBlock{}, "comment"},
		{`include`, ir.HeaderBlock{}, "read a file"},
	} {
		s := tab.Parse(map[string]string{"block-user-agents": c.value})
		if c.err != "" {
			if s.Block != nil || s.Defaults.Len() != 1 || len(s.Issues) != 1 || !strings.Contains(s.Issues[0].Message, c.err) {
				t.Errorf("%q: block %+v, issues %+v: want every Ingress refused, saying %q", c.value, s.Block, s.Issues, c.err)
			}
			continue
		}
		if len(s.Issues) != 0 || s.Defaults.Len() != 0 {
			t.Errorf("%q: issues %+v", c.value, s.Issues)
		}
		if s.Block == nil || !reflect.DeepEqual(s.Block.Headers, []ir.HeaderBlock{c.want}) {
			t.Errorf("%q: block %+v, want %+v", c.value, s.Block, c.want)
		}
	}
	s := tab.Parse(map[string]string{"block-referers": `~*example\.com,qwerty`, "block-user-agents": "AlphaBot"})
	if s.Block == nil || len(s.Block.Headers) != 2 || s.Block.Headers[0].Header != "referer" || s.Block.Headers[1].Header != "user-agent" {
		t.Errorf("both keys: %+v, want referer then user-agent", s.Block)
	}
	if s := tab.Parse(map[string]string{"block-referers": " , "}); s.Block != nil || len(s.Issues) != 0 {
		t.Errorf("an empty list: %+v %+v, want nothing", s.Block, s.Issues)
	}
}
