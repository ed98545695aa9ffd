package inferencelogreceiver // import "github.com/otelcol-llm/otelcol-llm/receivers/inferencelogreceiver"

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
)

// fieldsConfig builds the operator that closes every preset: it renames the
// parsers' captures to their final attribute names, converts numbers, scales
// percentages to ratios, drops scratch captures and stamps the server name. It
// is built in Go (not looked up in stanza's registry), so it cannot clash with
// any operator type a user configures.
type fieldsConfig struct {
	helper.TransformerConfig
	preset *preset
}

func newFieldsConfig(p *preset) operator.Config {
	return operator.NewConfig(&fieldsConfig{
		TransformerConfig: helper.NewTransformerConfig(fieldsOperatorID, fieldsOperatorID),
		preset:            p,
	})
}

func (c *fieldsConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	t, err := c.TransformerConfig.Build(set)
	if err != nil {
		return nil, err
	}
	return &fieldsOperator{TransformerOperator: t, preset: c.preset, server: c.preset.name}, nil
}

type fieldsOperator struct {
	helper.TransformerOperator
	preset *preset
	server any // the preset's name, boxed once rather than per record
}

func (o *fieldsOperator) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	return o.ProcessBatchWithTransform(ctx, entries, o.transform)
}

func (o *fieldsOperator) Process(ctx context.Context, e *entry.Entry) error {
	return o.ProcessWith(ctx, e, o.transform)
}

func (o *fieldsOperator) transform(e *entry.Entry) error {
	if e.Attributes == nil {
		e.Attributes = map[string]any{}
	}
	applyFields(o.preset, e.Attributes)
	e.Attributes[attrServer] = o.server
	return nil
}

// applyFields rewrites attrs in place according to the preset's field table.
// A value that does not convert keeps its text under the final name and the
// record gets a parse-error attribute, so the problem is visible and counted.
func applyFields(p *preset, attrs map[string]any) {
	for key, val := range attrs {
		f, ok := p.fields[key]
		if !ok {
			continue
		}
		delete(attrs, key)
		if f.Drop || val == "" {
			// Scratch captures, and optional groups that did not take part in the match.
			continue
		}
		conv, err := convertField(f, val)
		if err != nil {
			if _, marked := attrs[attrParseError]; !marked {
				attrs[attrParseError] = err.Error()
			}
			conv = val
		}
		attrs[f.Attribute] = conv
	}
}

func convertField(f *fieldSpec, val any) (any, error) {
	s, ok := val.(string)
	if !ok {
		// Already typed (e.g. a JSON number): only numbers need scaling.
		if n, isNum := val.(float64); isNum && (f.Type == "double" || f.Type == "int") {
			return scaleNumber(f, n), nil
		}
		return val, nil
	}
	switch f.Type {
	case "lower":
		return strings.ToLower(s), nil
	case "int":
		t := strings.TrimSpace(s)
		if q, ok := decimalQuotient(t, f.Divisor, false); ok {
			return q, nil
		}
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an integer", f.Attribute, s)
		}
		if f.Divisor != 0 {
			return divide(float64(n), f.Divisor), nil
		}
		return n, nil
	case "double":
		t := strings.TrimSpace(s)
		if q, ok := decimalQuotient(t, f.Divisor, true); ok {
			return q, nil
		}
		n, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", f.Attribute, s)
		}
		return scaleNumber(f, n), nil
	case "duration":
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a duration", f.Attribute, s)
		}
		return d.Seconds(), nil
	default:
		return s, nil
	}
}

func scaleNumber(f *fieldSpec, n float64) any {
	if f.Divisor != 0 {
		return divide(n, f.Divisor)
	}
	if f.Type == "int" {
		return int64(n)
	}
	return n
}

// divide converts units and rounds to 15 significant digits, so 4.1% becomes
// 0.041 rather than 0.040999999999999995.
func divide(n, d float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(n/d, 'g', 15, 64), 64)
	return v
}

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalQuotient is divide(parse(s), d) computed from the text, for the
// common case: d a power of ten (100, 1000), s a plain decimal ("4.1",
// "-12", a fraction only when fraction is set) of at most 15 significant
// digits. Its digits are an integer a float64 holds exactly, and so is the
// power of ten it is divided by, so the one division is the correctly
// rounded quotient: what divide's rounding to 15 digits gives for such an
// input (the quotient has the same digits). ok false: use the general path.
func decimalQuotient(s string, d float64, fraction bool) (float64, bool) {
	k := 0
	for k = 1; k <= 9 && exactPow10[k] != d; k++ {
	}
	if k > 9 || s == "" {
		return 0, false
	}
	neg := s[0] == '-'
	if neg || s[0] == '+' {
		s = s[1:]
	}
	var m int64
	digits, frac, dot := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + int64(c-'0')
			if m > 0 {
				digits++
			}
			if dot {
				frac++
			}
		case c == '.' && fraction && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return 0, false
		}
	}
	if len(s) == 0 || digits > 15 || frac+k >= len(exactPow10) {
		return 0, false
	}
	q := float64(m) / exactPow10[frac+k]
	if neg {
		q = -q
	}
	return q, true
}
