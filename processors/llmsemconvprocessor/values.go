package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-llm/otelcol-llm/internal/jsonscan"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// val is a converted attribute value waiting to be written.
type val struct {
	kind attrType
	// single: a string array of the one element s (the usual finish
	// reason), held without a slice of its own.
	single bool
	s      string
	i      int64
	d      float64
	b      bool
	arr    []string
}

// strs returns the elements of a string array.
func (v val) strs() []string {
	if v.single {
		return []string{v.s}
	}
	return v.arr
}

func (v val) put(m pcommon.Map, k string) {
	switch v.kind {
	case typeInt:
		m.PutInt(k, v.i)
	case typeDouble, typeISOTimeSinceStart:
		m.PutDouble(k, v.d)
	case typeBool:
		m.PutBool(k, v.b)
	case typeStringArray:
		v.putArray(m.PutEmptySlice(k), pcommon.Value{})
	default:
		m.PutStr(k, v.s)
	}
}

// putArray fills s with a string array's elements. A string value that goes
// away (donor, when not the zero Value) is moved into the first element,
// which then reuses its storage.
func (v val) putArray(s pcommon.Slice, donor pcommon.Value) {
	if v.single {
		e := s.AppendEmpty()
		if donor != (pcommon.Value{}) {
			donor.MoveTo(e)
		}
		e.SetStr(v.s)
		return
	}
	s.EnsureCapacity(len(v.arr))
	for i, x := range v.arr {
		e := s.AppendEmpty()
		if i == 0 && donor != (pcommon.Value{}) {
			donor.MoveTo(e)
		}
		e.SetStr(x)
	}
}

// valueType is the pcommon type put or set writes.
func (v val) valueType() pcommon.ValueType {
	switch v.kind {
	case typeInt:
		return pcommon.ValueTypeInt
	case typeDouble, typeISOTimeSinceStart:
		return pcommon.ValueTypeDouble
	case typeBool:
		return pcommon.ValueTypeBool
	case typeStringArray:
		return pcommon.ValueTypeSlice
	}
	return pcommon.ValueTypeStr
}

// set stores a scalar value in v (string arrays are written by put).
func (v val) set(p pcommon.Value) {
	switch v.kind {
	case typeInt:
		p.SetInt(v.i)
	case typeDouble, typeISOTimeSinceStart:
		p.SetDouble(v.d)
	case typeBool:
		p.SetBool(v.b)
	default:
		p.SetStr(v.s)
	}
}

// equal reports whether an existing attribute value carries the same fact.
func (v val) equal(p pcommon.Value) bool {
	switch v.kind {
	case typeInt:
		switch p.Type() {
		case pcommon.ValueTypeInt:
			return p.Int() == v.i
		case pcommon.ValueTypeDouble:
			return p.Double() == float64(v.i)
		}
	case typeDouble, typeISOTimeSinceStart:
		switch p.Type() {
		case pcommon.ValueTypeDouble:
			return math.Abs(p.Double()-v.d) <= 1e-9*math.Max(1, math.Abs(v.d))
		case pcommon.ValueTypeInt:
			return float64(p.Int()) == v.d
		}
	case typeBool:
		return p.Type() == pcommon.ValueTypeBool && p.Bool() == v.b
	case typeStringArray:
		if v.single {
			return p.Type() == pcommon.ValueTypeSlice && p.Slice().Len() == 1 && p.Slice().At(0).AsString() == v.s
		}
		if p.Type() != pcommon.ValueTypeSlice || p.Slice().Len() != len(v.arr) {
			return false
		}
		for i, e := range v.arr {
			if p.Slice().At(i).AsString() != e {
				return false
			}
		}
		return true
	default:
		return p.Type() == pcommon.ValueTypeStr && p.Str() == v.s
	}
	return false
}

func (v val) String() string {
	switch v.kind {
	case typeInt:
		return strconv.FormatInt(v.i, 10)
	case typeDouble, typeISOTimeSinceStart:
		return strconv.FormatFloat(v.d, 'g', -1, 64)
	case typeBool:
		return strconv.FormatBool(v.b)
	case typeStringArray:
		if v.single {
			return v.s
		}
		return strings.Join(v.arr, ",")
	}
	return v.s
}

// lowerASCII lower-cases s, allocating only when s has upper-case letters.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// lookupLower is m[lowerASCII(k)] without allocating for ASCII keys.
func lookupLower[V any](m map[string]V, k string) (V, bool) {
	upper := false
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= 0x80 {
			v, ok := m[lowerASCII(k)]
			return v, ok
		} else if c >= 'A' && c <= 'Z' {
			upper = true
		}
	}
	if !upper || len(k) > 64 {
		v, ok := m[lowerASCII(k)]
		return v, ok
	}
	var buf [64]byte
	v, ok := m[string(appendLower(buf[:0], k))]
	return v, ok
}

func (r *rule) mapValue(s string) string {
	if r.values != nil {
		if m, ok := lookupLower(r.values, strings.TrimSpace(s)); ok {
			return m
		}
	}
	if r.trimAfter != "" {
		if i := strings.Index(s, r.trimAfter); i > 0 {
			s = s[:i]
		}
	}
	if r.values != nil {
		if m, ok := lookupLower(r.values, strings.TrimSpace(s)); ok {
			return m
		}
	}
	return s
}

// rawOf returns the Go value of a pcommon value; only slices and maps allocate.
func rawOf(v pcommon.Value) any {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return v.Double()
	case pcommon.ValueTypeBool:
		return v.Bool()
	case pcommon.ValueTypeEmpty:
		return nil
	}
	return v.AsRaw()
}

// convert turns a foreign value into the rule's target type. ok is false
// when the value cannot be converted (it is then kept and reported).
func (r *rule) convert(x any, start pcommon.Timestamp) (val, bool) {
	switch r.typ {
	case typeInt:
		i, ok := toInt(x)
		return val{kind: typeInt, i: i}, ok
	case typeDouble:
		d, ok := toFloat(x)
		if !ok {
			return val{}, false
		}
		return val{kind: typeDouble, d: r.scaled(d)}, true
	case typeBool:
		b, ok := toBool(x)
		return val{kind: typeBool, b: b}, ok
	case typeStringArray:
		arr, ok := toStrings(x)
		if !ok {
			return val{}, false
		}
		for i := range arr {
			arr[i] = r.mapValue(arr[i])
		}
		return val{kind: typeStringArray, arr: arr}, true
	case typeJSONArray:
		switch t := x.(type) {
		case string:
			if !jsonscan.Valid(t) {
				return val{}, false
			}
			return val{kind: typeString, s: t}, true
		case []any:
			b, err := json.Marshal(t)
			if err != nil {
				return val{}, false
			}
			return val{kind: typeString, s: string(b)}, true
		}
		return val{}, false
	case typeISOTimeSinceStart:
		s, ok := x.(string)
		if !ok || start == 0 {
			return val{}, false
		}
		ts, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
		if err != nil {
			return val{}, false
		}
		d := ts.Sub(start.AsTime()).Seconds()
		if d < 0 {
			return val{}, false
		}
		return val{kind: typeISOTimeSinceStart, d: d}, true
	}
	var s string
	switch t := x.(type) {
	case string:
		s = t
	case nil:
		return val{}, false
	case float64:
		s = strconv.FormatFloat(t, 'g', -1, 64)
	case int64:
		s = strconv.FormatInt(t, 10)
	case bool:
		s = strconv.FormatBool(t)
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return val{}, false
		}
		s = string(b)
	}
	return val{kind: typeString, s: r.mapValue(s)}, true
}

// intOf is toInt(rawOf(v)) without boxing the value.
func intOf(v pcommon.Value) (int64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		if d := v.Double(); d == math.Trunc(d) && math.Abs(d) < 1<<53 {
			return int64(d), true
		}
	case pcommon.ValueTypeStr:
		return intFromString(v.Str())
	}
	return 0, false
}

// floatOf is toFloat(rawOf(v)) without boxing the value.
func floatOf(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		d := v.Double()
		return d, !math.IsNaN(d) && !math.IsInf(d, 0)
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	case pcommon.ValueTypeStr:
		return floatFromString(v.Str())
	}
	return 0, false
}

func toInt(x any) (int64, bool) {
	switch t := x.(type) {
	case int64:
		return t, true
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int64(t), true
		}
	case json.Number:
		return intFromString(string(t))
	case string:
		return intFromString(t)
	}
	return 0, false
}

func intFromString(t string) (int64, bool) {
	s := strings.TrimSpace(t)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f), true
	}
	return 0, false
}

func floatFromString(t string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

func (r *rule) scaled(d float64) float64 {
	switch {
	case r.divisor != 0:
		return d / r.divisor
	case r.scale != 0:
		return d * r.scale
	}
	return d
}

// convertValue is convert for an attribute value; the common cases do not
// box the value into an interface.
func (r *rule) convertValue(v pcommon.Value, start pcommon.Timestamp) (val, bool) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		switch r.typ {
		case typeString:
			return val{kind: typeString, s: r.mapValue(v.Str())}, true
		case typeStringArray:
			// One element, as toStrings reads a string that is not a JSON array.
			if x := v.Str(); !strings.HasPrefix(strings.TrimSpace(x), "[") {
				return val{kind: typeStringArray, single: true, s: r.mapValue(x)}, true
			}
		case typeInt:
			i, ok := intFromString(v.Str())
			return val{kind: typeInt, i: i}, ok
		case typeDouble:
			d, ok := floatFromString(v.Str())
			return val{kind: typeDouble, d: r.scaled(d)}, ok
		}
	case pcommon.ValueTypeInt:
		switch r.typ {
		case typeInt:
			return val{kind: typeInt, i: v.Int()}, true
		case typeDouble:
			return val{kind: typeDouble, d: r.scaled(float64(v.Int()))}, true
		}
	case pcommon.ValueTypeDouble:
		if r.typ == typeDouble {
			d := v.Double()
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return val{}, false
			}
			return val{kind: typeDouble, d: r.scaled(d)}, true
		}
	}
	return r.convert(rawOf(v), start)
}

// convertString is convert for a string (or the text of a JSON number)
// without boxing it into an interface.
func (r *rule) convertString(x string, start pcommon.Timestamp) (val, bool) {
	switch r.typ {
	case typeString:
		return val{kind: typeString, s: r.mapValue(x)}, true
	case typeInt:
		i, ok := intFromString(x)
		return val{kind: typeInt, i: i}, ok
	case typeDouble:
		d, ok := floatFromString(x)
		if !ok {
			return val{}, false
		}
		return val{kind: typeDouble, d: r.scaled(d)}, true
	case typeBool:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		return val{kind: typeBool, b: b}, err == nil
	}
	return r.convert(x, start)
}

func toFloat(x any) (float64, bool) {
	switch t := x.(type) {
	case float64:
		return t, !math.IsNaN(t) && !math.IsInf(t, 0)
	case int64:
		return float64(t), true
	case json.Number:
		return floatFromString(string(t))
	case string:
		return floatFromString(t)
	}
	return 0, false
}

func toBool(x any) (bool, bool) {
	switch t := x.(type) {
	case bool:
		return t, true
	case int64:
		return t != 0, t == 0 || t == 1
	case float64:
		return t != 0, t == 0 || t == 1
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(t))
		return b, err == nil
	}
	return false, false
}

func toStrings(x any) ([]string, bool) {
	switch t := x.(type) {
	case string:
		s := strings.TrimSpace(t)
		if strings.HasPrefix(s, "[") {
			var arr []any
			if err := json.Unmarshal([]byte(s), &arr); err == nil {
				return toStrings(arr)
			}
		}
		return []string{t}, true
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			switch s := e.(type) {
			case string:
				out = append(out, s)
			case nil:
			default:
				b, err := json.Marshal(s)
				if err != nil {
					return nil, false
				}
				out = append(out, string(b))
			}
		}
		return out, true
	case nil:
		return nil, false
	}
	v, ok := (&rule{}).convert(x, 0)
	return []string{v.s}, ok
}
