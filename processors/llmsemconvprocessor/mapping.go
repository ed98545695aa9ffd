package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed mapping.yaml
var mappingYAML []byte

// mappingSchema is the schema version of mapping.yaml this code reads.
const mappingSchema = 1

type attrType uint8

const (
	typeString attrType = iota
	typeInt
	typeDouble
	typeBool
	typeStringArray
	typeJSONArray
	typeISOTimeSinceStart
)

var attrTypes = map[string]attrType{
	"": typeString, "string": typeString, "int": typeInt, "double": typeDouble, "bool": typeBool,
	"string_array": typeStringArray, "json_array": typeJSONArray, "iso_time_since_start": typeISOTimeSinceStart,
}

// targetIgnore as a per-operation target marks the attribute as known and
// carrying nothing to map for that operation.
const targetIgnore = "ignore"

const defaultPriority = 10

// --- YAML shape -------------------------------------------------------------

type yamlTable struct {
	Schema   int                          `yaml:"schema"`
	Version  string                       `yaml:"version"`
	Targets  map[string]map[string]string `yaml:"targets"`
	Official []string                     `yaml:"official"`
	Values   map[string]map[string]string `yaml:"values"`
	Dialects []yamlDialect                `yaml:"dialects"`
}

type yamlDialect struct {
	Name   string `yaml:"name"`
	Detect struct {
		Keys      []string `yaml:"keys"`
		Prefixes  []string `yaml:"prefixes"`
		SpanNames []string `yaml:"span_names"`
	} `yaml:"detect"`
	Namespaces  []string `yaml:"namespaces"`
	Passthrough []string `yaml:"passthrough"`
	NeverMap    []string `yaml:"never_map"`
	Operation   []struct {
		Attribute string            `yaml:"attribute"`
		Values    map[string]string `yaml:"values"`
		SpanName  map[string]string `yaml:"span_name"`
	} `yaml:"operation"`
	ProviderPairs *struct {
		Attributes []string          `yaml:"attributes"`
		Values     map[string]string `yaml:"values"`
	} `yaml:"provider_pairs"`
	Wrappers *struct {
		Attribute string   `yaml:"attribute"`
		Values    []string `yaml:"values"`
	} `yaml:"wrappers"`
	Events *struct {
		Input  []string `yaml:"input"`
		Output []string `yaml:"output"`
	} `yaml:"events"`
	Attributes map[string]yamlRule            `yaml:"attributes"`
	JSON       map[string]map[string]yamlRule `yaml:"json"`
	Messages   []yamlMessages                 `yaml:"messages"`
}

type yamlRule struct {
	To        string            `yaml:"to"`
	Else      string            `yaml:"else"`
	Type      string            `yaml:"type"`
	Values    string            `yaml:"values"`
	Scale     float64           `yaml:"scale"`
	TrimAfter string            `yaml:"trim_after"`
	Priority  int               `yaml:"priority"`
	On        map[string]string `yaml:"on"`
	TotalOf   []string          `yaml:"total_of"`
	Ignore    bool              `yaml:"ignore"`
}

type yamlMessages struct {
	Key       string `yaml:"key"`
	Prefix    string `yaml:"prefix"`
	Direction string `yaml:"direction"`
	Layout    string `yaml:"layout"`
}

// --- compiled form ----------------------------------------------------------

type rule struct {
	dialect   int
	key       string
	to        string
	toID      int
	alt       string // target used when `to` already holds a different value
	altID     int
	on        map[string]onTarget
	typ       attrType
	values    map[string]string
	scale     float64
	divisor   float64
	trimAfter string
	priority  int
	totalOf   []string
	totalIDs  []int // target ids of totalOf
	ignore    bool
}

type direction uint8

const (
	dirInput direction = iota
	dirOutput
	dirTools
)

type layout uint8

const (
	layoutOpenInference layout = iota
	layoutOpenInferenceTools
	layoutIndexed
	layoutIndexedTools
	layoutChatJSON
	layoutTextOrChatJSON
	layoutText
	layoutVercelPrompt
	layoutVercelToolCalls
)

var layouts = map[string]layout{
	"openinference": layoutOpenInference, "openinference_tools": layoutOpenInferenceTools,
	"indexed": layoutIndexed, "indexed_tools": layoutIndexedTools, "chat_json": layoutChatJSON,
	"text_or_chat_json": layoutTextOrChatJSON, "text": layoutText, "vercel_prompt": layoutVercelPrompt,
	"vercel_tool_calls": layoutVercelToolCalls,
}

var directions = map[string]direction{"input": dirInput, "output": dirOutput, "tools": dirTools}

type msgSource struct {
	dialect   int
	key       string // exact key, or
	prefix    string // indexed prefix
	direction direction
	layout    layout
	order     int
}

type jsonRule struct {
	dialect int
	key     string
	fields  map[string]*rule
}

type opSource struct {
	attribute string
	values    map[string]string
	spanName  map[string]string
}

type dialect struct {
	name          string
	idx           int
	spanNames     map[string]bool
	ops           []opSource
	pairAttrs     []string
	pairValues    map[string]string
	wrapperAttr   string
	wrapperValues map[string]bool
}

// keyInfo is what the table knows about one exact attribute key.
type keyInfo struct {
	dialect int
	marker  bool
	rule    *rule
	json    *jsonRule
	msg     *msgSource
}

type prefixKind uint8

const (
	prefixMessages prefixKind = iota
	prefixMarker
	prefixPassthrough
)

type prefixEntry struct {
	prefix  string
	kind    prefixKind
	marker  bool
	dialect int
	msg     *msgSource
}

// officialInfo describes an official gen_ai.* name.
type officialInfo struct {
	content contentGroup // groupNone when not content
	id      int          // target id; official names are the tracked ids
}

// maxTargetIDs bounds the interned target names (presence is a bitset).
const maxTargetIDs = 512

// table is the compiled mapping for one target and a set of dialects.
type table struct {
	version   string
	target    string
	dialects  []*dialect
	byName    map[string]*dialect
	exact     map[string]*keyInfo
	prefixes  map[string][]prefixEntry // first key segment -> prefix entries
	nsMask    map[string]uint32        // first key segment -> dialects owning the namespace
	official  map[string]officialInfo
	rename    map[string]string // canonical (v1.41) -> target name
	values    map[string]map[string]string
	events    map[string]eventInfo
	legacyIdx int

	// Target names are interned: ids below nTracked are the official names,
	// whose presence the read-only scan records in a bitset.
	ids      map[string]int
	names    []string
	nTracked int
	// jsonIDs are the ids of the official JSON attributes, in jsonKeys order.
	jsonIDs [len(jsonKeys)]int
	// jsonGroup is, by target id, the index in jsonKeys, -1 for others.
	jsonGroup []int8
	// ids of targets the normalizer writes by name
	opID, providerID, finishID int
}

// id interns a target name; only called while compiling.
func (t *table) intern(name string) int {
	if id, ok := t.ids[name]; ok {
		return id
	}
	t.ids[name] = len(t.names)
	t.names = append(t.names, name)
	return len(t.names) - 1
}

// targetID returns the id of a target name, -1 when it was never interned.
func (t *table) targetID(name string) int {
	if id, ok := t.ids[name]; ok {
		return id
	}
	return -1
}

type eventInfo struct {
	dialect   int
	direction direction
}

func parseMapping(raw []byte) (*yamlTable, error) {
	var y yamlTable
	if err := yaml.Unmarshal(raw, &y); err != nil {
		return nil, fmt.Errorf("mapping table: %w", err)
	}
	if y.Schema != mappingSchema {
		return nil, fmt.Errorf("mapping table: schema %d, this build reads schema %d", y.Schema, mappingSchema)
	}
	return &y, nil
}

func dialectNames() []string {
	y, err := parseMapping(mappingYAML)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(y.Dialects))
	for _, d := range y.Dialects {
		names = append(names, d.Name)
	}
	return names
}

func firstSegment(k string) string {
	if i := strings.IndexByte(k, '.'); i > 0 {
		return k[:i]
	}
	return k
}

// compileTable builds the lookup structures for one target and the enabled
// dialects (all when enabled is empty). Conflicting definitions of one key
// are an error: the table must say one thing per key.
func compileTable(raw []byte, target string, enabled []string) (*table, error) {
	y, err := parseMapping(raw)
	if err != nil {
		return nil, err
	}
	rename, ok := y.Targets[target]
	if !ok {
		return nil, fmt.Errorf("mapping table: no target %q", target)
	}
	if len(y.Dialects) > 32 {
		return nil, fmt.Errorf("mapping table: at most 32 dialects, got %d", len(y.Dialects))
	}
	t := &table{
		version:   y.Version,
		target:    target,
		byName:    map[string]*dialect{},
		exact:     map[string]*keyInfo{},
		prefixes:  map[string][]prefixEntry{},
		nsMask:    map[string]uint32{},
		official:  map[string]officialInfo{},
		rename:    rename,
		values:    y.Values,
		events:    map[string]eventInfo{},
		legacyIdx: -1,
		ids:       map[string]int{},
	}
	for _, o := range y.Official {
		t.official[o] = officialInfo{content: contentGroupOf(o), id: t.intern(o)}
	}
	t.nTracked = len(t.names)
	for _, n := range []string{attrOperationName, attrProviderName, attrInputMessages, attrOutputMsgs, attrSystemInstr, attrToolDefs, attrFinishReasons} {
		t.intern(n)
	}
	for g, k := range jsonKeys {
		t.jsonIDs[g] = t.intern(k)
	}
	for _, o := range y.Official {
		if strings.HasPrefix(o, attrUsagePrefix) {
			t.intern(attrRollupPrefix + strings.TrimPrefix(o, attrUsagePrefix))
		}
	}
	order := 0
	for _, yd := range y.Dialects {
		if len(enabled) > 0 && !contains(enabled, yd.Name) {
			continue
		}
		d := &dialect{name: yd.Name, idx: len(t.dialects), spanNames: map[string]bool{}}
		t.dialects = append(t.dialects, d)
		t.byName[d.name] = d
		if d.name == "otel_legacy" {
			t.legacyIdx = d.idx
		}
		info := func(k string) (*keyInfo, error) {
			ki := t.exact[k]
			if ki == nil {
				ki = &keyInfo{dialect: d.idx}
				t.exact[k] = ki
			} else if ki.dialect != d.idx {
				return nil, fmt.Errorf("mapping table: key %q is defined by dialects %s and %s", k, t.dialects[ki.dialect].name, d.name)
			}
			return ki, nil
		}
		for _, k := range yd.Detect.Keys {
			ki, err := info(k)
			if err != nil {
				return nil, err
			}
			ki.marker = true
		}
		for _, p := range yd.Detect.Prefixes {
			seg := firstSegment(p)
			t.prefixes[seg] = append(t.prefixes[seg], prefixEntry{prefix: p, kind: prefixMarker, marker: true, dialect: d.idx})
		}
		for _, n := range yd.Detect.SpanNames {
			d.spanNames[n] = true
		}
		for _, ns := range yd.Namespaces {
			t.nsMask[ns] |= 1 << uint(d.idx)
		}
		for _, p := range append(append([]string{}, yd.Passthrough...), yd.NeverMap...) {
			seg := firstSegment(p)
			t.prefixes[seg] = append(t.prefixes[seg], prefixEntry{prefix: p, kind: prefixPassthrough, dialect: d.idx})
		}
		for _, op := range yd.Operation {
			d.ops = append(d.ops, opSource{attribute: op.Attribute, values: op.Values, spanName: op.SpanName})
		}
		if yd.ProviderPairs != nil {
			d.pairAttrs = yd.ProviderPairs.Attributes
			d.pairValues = yd.ProviderPairs.Values
		}
		if yd.Wrappers != nil {
			d.wrapperAttr = yd.Wrappers.Attribute
			d.wrapperValues = map[string]bool{}
			for _, v := range yd.Wrappers.Values {
				d.wrapperValues[v] = true
			}
		}
		if yd.Events != nil {
			for _, e := range yd.Events.Input {
				t.events[e] = eventInfo{dialect: d.idx, direction: dirInput}
			}
			for _, e := range yd.Events.Output {
				t.events[e] = eventInfo{dialect: d.idx, direction: dirOutput}
			}
		}
		keys := make([]string, 0, len(yd.Attributes))
		for k := range yd.Attributes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			r, err := t.compileRule(d, k, yd.Attributes[k])
			if err != nil {
				return nil, err
			}
			ki, err := info(k)
			if err != nil {
				return nil, err
			}
			if ki.rule != nil || ki.json != nil || ki.msg != nil {
				return nil, fmt.Errorf("mapping table: key %q is defined twice", k)
			}
			ki.rule = r
		}
		for k, fields := range yd.JSON {
			jr := &jsonRule{dialect: d.idx, key: k, fields: map[string]*rule{}}
			for f, yr := range fields {
				r, err := t.compileRule(d, k+"."+f, yr)
				if err != nil {
					return nil, err
				}
				jr.fields[f] = r
			}
			ki, err := info(k)
			if err != nil {
				return nil, err
			}
			if ki.rule != nil || ki.json != nil || ki.msg != nil {
				return nil, fmt.Errorf("mapping table: key %q is defined twice", k)
			}
			ki.json = jr
		}
		for _, ym := range yd.Messages {
			dir, ok := directions[ym.Direction]
			if !ok {
				return nil, fmt.Errorf("mapping table: dialect %s: message direction %q", d.name, ym.Direction)
			}
			lay, ok := layouts[ym.Layout]
			if !ok {
				return nil, fmt.Errorf("mapping table: dialect %s: message layout %q", d.name, ym.Layout)
			}
			ms := &msgSource{dialect: d.idx, key: ym.Key, prefix: ym.Prefix, direction: dir, layout: lay, order: order}
			order++
			switch {
			case ym.Key != "" && ym.Prefix == "":
				ki, err := info(ym.Key)
				if err != nil {
					return nil, err
				}
				if ki.rule != nil || ki.json != nil || ki.msg != nil {
					return nil, fmt.Errorf("mapping table: key %q is defined twice", ym.Key)
				}
				ki.msg = ms
			case ym.Prefix != "" && ym.Key == "":
				seg := firstSegment(ym.Prefix)
				t.prefixes[seg] = append(t.prefixes[seg], prefixEntry{prefix: ym.Prefix, kind: prefixMessages, dialect: d.idx, msg: ms})
			default:
				return nil, fmt.Errorf("mapping table: dialect %s: a message source needs exactly one of key and prefix", d.name)
			}
		}
	}
	// Official names of the other target are renamed to this target's.
	if t.legacyIdx >= 0 {
		froms := make([]string, 0, len(rename))
		for from := range rename {
			froms = append(froms, from)
		}
		sort.Strings(froms)
		for _, from := range froms {
			if _, ok := t.exact[from]; ok {
				continue
			}
			t.exact[from] = &keyInfo{dialect: t.legacyIdx, rule: &rule{dialect: t.legacyIdx, key: from, to: rename[from], toID: t.intern(rename[from]), altID: -1, typ: typeInt, priority: 15}}
		}
	}
	if len(t.names) > maxTargetIDs {
		return nil, fmt.Errorf("mapping table: %d target names, at most %d", len(t.names), maxTargetIDs)
	}
	// One entry per prefix: a message source that is also a detection
	// marker keeps both roles. Longest prefixes first so the most specific
	// entry wins.
	for seg, list := range t.prefixes {
		merged := list[:0]
		for _, e := range list {
			dup := false
			for i := range merged {
				if merged[i].prefix == e.prefix {
					if merged[i].dialect != e.dialect {
						return nil, fmt.Errorf("mapping table: prefix %q is defined by dialects %s and %s", e.prefix, t.dialects[merged[i].dialect].name, t.dialects[e.dialect].name)
					}
					merged[i].marker = merged[i].marker || e.marker
					if e.kind != prefixMarker {
						merged[i].kind, merged[i].msg = e.kind, e.msg
					}
					dup = true
				}
			}
			if !dup {
				merged = append(merged, e)
			}
		}
		list = merged
		sort.SliceStable(list, func(i, j int) bool { return len(list[i].prefix) > len(list[j].prefix) })
		t.prefixes[seg] = list
	}
	t.opID, t.providerID, t.finishID = t.targetID(attrOperationName), t.targetID(attrProviderName), t.targetID(attrFinishReasons)
	t.jsonGroup = make([]int8, len(t.names))
	for i := range t.jsonGroup {
		t.jsonGroup[i] = -1
	}
	for g, id := range t.jsonIDs {
		t.jsonGroup[id] = int8(g)
	}
	return t, nil
}

func (t *table) compileRule(d *dialect, key string, yr yamlRule) (*rule, error) {
	typ, ok := attrTypes[yr.Type]
	if !ok {
		return nil, fmt.Errorf("mapping table: %s: unknown type %q", key, yr.Type)
	}
	r := &rule{
		dialect: d.idx, key: key, typ: typ, scale: yr.Scale, trimAfter: yr.TrimAfter,
		priority: yr.Priority, totalOf: yr.TotalOf, ignore: yr.Ignore,
	}
	if r.priority == 0 {
		r.priority = defaultPriority
	}
	if yr.Values != "" {
		vm, ok := t.values[yr.Values]
		if !ok {
			return nil, fmt.Errorf("mapping table: %s: unknown value map %q", key, yr.Values)
		}
		r.values = vm
	}
	r.to = t.targetName(yr.To)
	r.toID, r.altID = -1, -1
	if r.to != "" {
		r.toID = t.intern(r.to)
	}
	if yr.Else != "" {
		r.alt = t.targetName(yr.Else)
		r.altID = t.intern(r.alt)
	}
	if r.scale > 0 && r.scale < 1 {
		// Divide by the exact reciprocal (ms -> s: / 1000) to keep decimals exact.
		r.divisor = math.Round(1 / r.scale)
	}
	if len(yr.On) > 0 {
		r.on = map[string]onTarget{}
		for op, to := range yr.On {
			if to == targetIgnore {
				r.on[op] = onTarget{to: targetIgnore, id: -1}
				continue
			}
			name := t.targetName(to)
			r.on[op] = onTarget{to: name, id: t.intern(name)}
		}
	}
	for i, n := range r.totalOf {
		r.totalOf[i] = t.targetName(n)
		r.totalIDs = append(r.totalIDs, t.intern(r.totalOf[i]))
	}
	if r.to == "" && r.on == nil && r.totalOf == nil && !r.ignore {
		return nil, fmt.Errorf("mapping table: %s: a rule needs to, on, total_of or ignore", key)
	}
	return r, nil
}

// onTarget is a rule's target for one operation, with its interned id.
type onTarget struct {
	to string
	id int
}

// targetName turns a canonical (v1.41) name into the name of the table's target.
func (t *table) targetName(n string) string {
	if to, ok := t.rename[n]; ok {
		return to
	}
	return n
}

// matchPrefix returns the prefix entry a key falls under, if any.
func (t *table) matchPrefix(seg, k string) *prefixEntry {
	list := t.prefixes[seg]
	for i := range list {
		if strings.HasPrefix(k, list[i].prefix) {
			return &list[i]
		}
	}
	return nil
}
