package llmsemconvprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/llmsemconvprocessor"

import (
	_ "embed"
	"fmt"
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
