package llmsemconvprocessor

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

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
	t := newTable(y, target, rename)
	order := 0 // of the message sources, across dialects
	for _, yd := range y.Dialects {
		if len(enabled) > 0 && !contains(enabled, yd.Name) {
			continue
		}
		if err := t.addDialect(yd, &order); err != nil {
			return nil, err
		}
	}
	t.addRenames(rename)
	if len(t.names) > maxTargetIDs {
		return nil, fmt.Errorf("mapping table: %d target names, at most %d", len(t.names), maxTargetIDs)
	}
	if err := t.mergePrefixes(); err != nil {
		return nil, err
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

// newTable is the table with no dialect yet: the official names of the
// target and the other names the processor writes, interned.
func newTable(y *yamlTable, target string, rename map[string]string) *table {
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
	return t
}

// addDialect compiles one dialect; *order numbers its message sources.
func (t *table) addDialect(yd yamlDialect, order *int) error {
	d := &dialect{name: yd.Name, idx: len(t.dialects), spanNames: map[string]bool{}}
	t.dialects = append(t.dialects, d)
	t.byName[d.name] = d
	if d.name == "otel_legacy" {
		t.legacyIdx = d.idx
	}
	if err := t.addDetection(d, yd); err != nil {
		return err
	}
	t.addShape(d, yd)
	if err := t.addRules(d, yd); err != nil {
		return err
	}
	return t.addMessageSources(d, yd, order)
}

// keyInfo returns the exact entry of key k for dialect d, added when new;
// a key that another dialect defines is an error.
func (t *table) keyInfo(d *dialect, k string) (*keyInfo, error) {
	ki := t.exact[k]
	if ki == nil {
		ki = &keyInfo{dialect: d.idx}
		t.exact[k] = ki
	} else if ki.dialect != d.idx {
		return nil, fmt.Errorf("mapping table: key %q is defined by dialects %s and %s", k, t.dialects[ki.dialect].name, d.name)
	}
	return ki, nil
}

// claimKey is keyInfo for a key that gets a mapping (a rule, a JSON rule
// or a message source): one mapping per key.
func (t *table) claimKey(d *dialect, k string) (*keyInfo, error) {
	ki, err := t.keyInfo(d, k)
	if err != nil {
		return nil, err
	}
	if ki.rule != nil || ki.json != nil || ki.msg != nil {
		return nil, fmt.Errorf("mapping table: key %q is defined twice", k)
	}
	return ki, nil
}

// addDetection adds what detects dialect d: marker keys and prefixes, span
// names, its namespaces and the prefixes it passes through.
func (t *table) addDetection(d *dialect, yd yamlDialect) error {
	for _, k := range yd.Detect.Keys {
		ki, err := t.keyInfo(d, k)
		if err != nil {
			return err
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
	return nil
}

// addShape adds the item-level facts of dialect d: where its operation
// comes from, provider pairs, wrapper spans and message events.
func (t *table) addShape(d *dialect, yd yamlDialect) {
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
}

// addRules compiles the attribute rules (in key order) and the JSON rules
// of dialect d.
func (t *table) addRules(d *dialect, yd yamlDialect) error {
	keys := make([]string, 0, len(yd.Attributes))
	for k := range yd.Attributes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r, err := t.compileRule(d, k, yd.Attributes[k])
		if err != nil {
			return err
		}
		ki, err := t.claimKey(d, k)
		if err != nil {
			return err
		}
		ki.rule = r
	}
	for k, fields := range yd.JSON {
		jr := &jsonRule{dialect: d.idx, key: k, fields: map[string]*rule{}}
		for f, yr := range fields {
			r, err := t.compileRule(d, k+"."+f, yr)
			if err != nil {
				return err
			}
			jr.fields[f] = r
		}
		ki, err := t.claimKey(d, k)
		if err != nil {
			return err
		}
		ki.json = jr
	}
	return nil
}

// addMessageSources adds the message sources of dialect d, each held by one
// key or under one prefix, numbered from *order in table order.
func (t *table) addMessageSources(d *dialect, yd yamlDialect, order *int) error {
	for _, ym := range yd.Messages {
		dir, ok := directions[ym.Direction]
		if !ok {
			return fmt.Errorf("mapping table: dialect %s: message direction %q", d.name, ym.Direction)
		}
		lay, ok := layouts[ym.Layout]
		if !ok {
			return fmt.Errorf("mapping table: dialect %s: message layout %q", d.name, ym.Layout)
		}
		ms := &msgSource{dialect: d.idx, key: ym.Key, prefix: ym.Prefix, direction: dir, layout: lay, order: *order}
		*order++
		switch {
		case ym.Key != "" && ym.Prefix == "":
			ki, err := t.claimKey(d, ym.Key)
			if err != nil {
				return err
			}
			ki.msg = ms
		case ym.Prefix != "" && ym.Key == "":
			seg := firstSegment(ym.Prefix)
			t.prefixes[seg] = append(t.prefixes[seg], prefixEntry{prefix: ym.Prefix, kind: prefixMessages, dialect: d.idx, msg: ms})
		default:
			return fmt.Errorf("mapping table: dialect %s: a message source needs exactly one of key and prefix", d.name)
		}
	}
	return nil
}

// addRenames maps the official names of the other target to this target's
// (as deprecated OTel names, when the otel_legacy dialect is on).
func (t *table) addRenames(rename map[string]string) {
	if t.legacyIdx < 0 {
		return
	}
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

// mergePrefixes leaves one entry per prefix: a message source that is also
// a detection marker keeps both roles. Longest prefixes come first so that
// the most specific entry wins.
func (t *table) mergePrefixes() error {
	for seg, list := range t.prefixes {
		merged := list[:0]
		for _, e := range list {
			dup := false
			for i := range merged {
				if merged[i].prefix != e.prefix {
					continue
				}
				if merged[i].dialect != e.dialect {
					return fmt.Errorf("mapping table: prefix %q is defined by dialects %s and %s", e.prefix, t.dialects[merged[i].dialect].name, t.dialects[e.dialect].name)
				}
				merged[i].marker = merged[i].marker || e.marker
				if e.kind != prefixMarker {
					merged[i].kind, merged[i].msg = e.kind, e.msg
				}
				dup = true
			}
			if !dup {
				merged = append(merged, e)
			}
		}
		sort.SliceStable(merged, func(i, j int) bool { return len(merged[i].prefix) > len(merged[j].prefix) })
		t.prefixes[seg] = merged
	}
	return nil
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
