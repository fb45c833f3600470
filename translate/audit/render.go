package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// verdictOrder is the order verdicts are counted in.
var verdictOrder = []annotations.Verdict{annotations.Honoured, annotations.HonouredWithDifference, annotations.Ignored,
	annotations.Refused, annotations.NotYet, annotations.Unknown}

// JSON is the report for scripts (`ingress-xds audit -o json`).
func (r *Report) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // paths and notes hold < and >, for people to read
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encoding the audit: %w", err)
	}
	return b.Bytes(), nil
}

// Text is the report for people.
func (r *Report) Text() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "ingress-xds audit: %d Ingresses of the class, %d would not be served\n", r.Summary.Ingresses, r.Summary.Refused)
	for _, ing := range r.Ingresses {
		b.WriteString("\n")
		if ing.Served {
			fmt.Fprintf(&b, "%s/%s: served\n", ing.Namespace, ing.Name)
		} else {
			fmt.Fprintf(&b, "%s/%s: REFUSED: not served (each of its paths answers 503)\n", ing.Namespace, ing.Name)
			for _, why := range ing.Refusals {
				fmt.Fprintf(&b, "  why: %s\n", why)
			}
		}
		if len(ing.Annotations) > 0 {
			b.WriteString("  annotations:\n")
			for _, a := range ing.Annotations {
				fmt.Fprintf(&b, "    %s: %s", a.Key, a.Verdict)
				if a.Note != "" {
					fmt.Fprintf(&b, " (%s)", a.Note)
				}
				b.WriteString("\n")
				for _, d := range a.Directives {
					fmt.Fprintf(&b, "      line %d %s: %s", d.Line, d.Directive, d.Verdict)
					if d.Note != "" {
						fmt.Fprintf(&b, " (%s)", d.Note)
					}
					b.WriteString("\n")
				}
			}
		}
		var problems []Problem
		for _, p := range ing.Problems {
			if p.Reason != refusedReason { // listed above, as why
				problems = append(problems, p)
			}
		}
		if len(problems) > 0 {
			b.WriteString("  problems (Warning Events serve would write):\n")
			for _, p := range problems {
				fmt.Fprintf(&b, "    %s: %s\n", p.Reason, p.Message)
			}
		}
		if len(ing.Behaviours) > 0 {
			b.WriteString("  ingress-nginx behaviours that apply:\n")
			for _, bh := range ing.Behaviours {
				writeBehaviour(&b, bh, "    ")
			}
		}
	}
	b.WriteString("\nEvery Ingress:\n")
	for _, bh := range r.EveryIngress {
		writeBehaviour(&b, bh, "  ")
	}
	var counts []string
	for _, v := range verdictOrder {
		if n := r.Summary.Annotations[v]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s: %d", v, n))
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(&b, "\nAnnotations by verdict: %s (docs/annotations.md has every key's)\n", strings.Join(counts, ", "))
	}
	fmt.Fprintf(&b, "\nConfigMap: %s.\n", r.ConfigMap)
	for _, k := range r.ConfigMapKeys {
		fmt.Fprintf(&b, "  %s: %s\n", k.Key, k.Verdict)
		for _, p := range k.Problems {
			fmt.Fprintf(&b, "    %s: %s\n", p.Reason, p.Message)
		}
	}
	return b.Bytes()
}

func writeBehaviour(b *bytes.Buffer, bh Behaviour, indent string) {
	same := "differs"
	if bh.Same {
		same = "same"
	}
	fmt.Fprintf(b, "%s%s (%s): %s\n", indent, bh.Title, bh.ID, same)
	if bh.Where != "" {
		fmt.Fprintf(b, "%s  where: %s\n", indent, bh.Where)
	}
	fmt.Fprintf(b, "%s  ingress-nginx: %s\n", indent, bh.IngressNginx)
	fmt.Fprintf(b, "%s  ingress-xds: %s\n", indent, bh.IngressXDS)
}
