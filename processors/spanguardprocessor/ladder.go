package spanguardprocessor // import "github.com/otelcol-llm/otelcol-llm/processors/spanguardprocessor"

import (
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// maxResolveSteps bounds the walk from a removed parent to its nearest kept
// ancestor (malformed traces can contain parent cycles).
const maxResolveSteps = 1024

// Node states in the ladder.
const (
	nodeUndecided = iota
	nodeKept
	nodeDropped
	nodeFolded
)

type node struct {
	ref        int32
	id, parent uint64
	start, end pcommon.Timestamp
	isErr      bool
	owed       bool // forwarded spans name it as parent: already counted in the budget
	mandatory  bool
	tooLarge   bool
	children   int32
	depth      int32
	state      uint8
	repl       uint64 // for a removed span: the span that replaces it as parent
}

// tally is what one request changed; it becomes the counters after the lock
// is released.
type tally struct {
	folded, composites, reparented, truncated int
	attrs, events, links                      int
	dropped                                   [numDropReasons]int
	overBudget                                int
	evicted                                   int // trace states released for capacity
}

func (t *tally) limits(r limitResult) {
	t.truncated += r.truncated
	t.attrs += r.attrs
	t.events += r.events
	t.links += r.links
}

// ladder runs the degradation ladder on one trace's part of a request.
type ladder struct {
	cfg    *Config
	limits spanLimits
	sc     *scan
	c      *chunk
	st     *traceState
	tal    *tally
	nodes  []node
	index  map[uint64]int32
}

// run applies, in order, while the trace does not fit its budget: sibling
// compression, span limits, then dropping (never the root, error spans or
// parents owed to already forwarded spans), re-parenting what it keeps to the
// nearest kept ancestor. It always updates the trace's bookkeeping.
func (l *ladder) run() {
	st, sc := l.st, l.sc
	st.guard()
	l.build()

	remS, remB := l.remaining()
	over := !l.fits(remS, remB)
	if over && !st.overBudget {
		st.overBudget = true
		l.tal.overBudget++
	}
	if over && l.cfg.Compression.Enabled {
		l.compress()
		over = !l.fits(remS, remB)
	}
	if over || l.c.tooLarge {
		l.applyLimits(over)
		over = !l.fits(remS, remB)
	}
	if !over {
		remS, remB = math.MaxInt, math.MaxInt64
	} else {
		for i := range l.nodes {
			n := &l.nodes[i]
			if n.mandatory && !n.tooLarge && n.state == nodeUndecided {
				if !n.owed {
					remS--
				}
				remB -= spanCost(int(sc.spans[n.ref].size))
			}
		}
	}
	l.selectSpans(remS, remB)
}

func (l *ladder) remaining() (int, int64) {
	remS, remB := math.MaxInt, int64(math.MaxInt64)
	if l.cfg.TraceBudget.MaxSpans > 0 {
		remS = l.cfg.TraceBudget.MaxSpans - l.st.spans - len(l.st.pending)
	}
	if l.cfg.TraceBudget.MaxBytes > 0 {
		remB = l.cfg.TraceBudget.MaxBytes - l.st.bytes
	}
	return remS, remB
}

// build indexes the chunk's spans as a tree.
func (l *ladder) build() {
	sc, c := l.sc, l.c
	l.nodes = make([]node, len(c.order))
	l.index = make(map[uint64]int32, len(c.order))
	for k, i := range c.order {
		r := &sc.spans[i]
		s := r.span
		n := node{ref: i, id: sid(s.SpanID()), parent: sid(s.ParentSpanID()),
			start: s.StartTimestamp(), end: s.EndTimestamp(),
			isErr: s.Status().Code() == ptrace.StatusCodeError, tooLarge: r.flags&flagTooLarge != 0}
		if _, dup := l.index[n.id]; !dup {
			l.index[n.id] = int32(k)
		}
		_, n.owed = l.st.pending[n.id]
		n.mandatory = n.parent == 0 || n.isErr || n.owed
		if n.owed {
			n.children++ // it has forwarded children
		}
		l.nodes[k] = n
	}
	parents := make([]int32, len(l.nodes))
	for k := range l.nodes {
		parents[k] = -1
		if p, ok := l.index[l.nodes[k].parent]; ok && p != int32(k) {
			parents[k] = p
			l.nodes[p].children++
		}
	}
	for k, d := range depths(parents) {
		l.nodes[k].depth = d
	}
}

// fits reports whether the live spans, and the parents they would newly owe,
// fit the remaining budget.
func (l *ladder) fits(remS int, remB int64) bool {
	n := 0
	var b int64
	owed := map[uint64]struct{}{}
	for i := range l.nodes {
		nd := &l.nodes[i]
		if nd.state != nodeUndecided {
			continue
		}
		if !nd.owed {
			n++
		}
		b += spanCost(int(l.sc.spans[nd.ref].size))
		if _, in := l.index[nd.parent]; !in && nd.parent != 0 && l.unknown(nd.parent) {
			owed[nd.parent] = struct{}{}
		}
	}
	return n+len(owed) <= remS && b <= remB
}

// unknown reports whether id, a span outside the chunk, has neither been
// forwarded nor is already owed nor was removed.
func (l *ladder) unknown(id uint64) bool {
	if _, ok := l.st.kept[id]; ok {
		return false
	}
	if _, ok := l.st.pending[id]; ok {
		return false
	}
	if _, ok := l.st.dropped[id]; ok {
		return false
	}
	return true
}

// compress folds runs of consecutive sibling leaf spans with the same name,
// kind and status, each at most compression.max_span_duration long, into the
// run's first span, which becomes a composite (ladder step 1).
func (l *ladder) compress() {
	sc := l.sc
	maxDur := uint64(l.cfg.Compression.MaxSpanDuration)
	eligible := func(n *node) bool {
		return n.state == nodeUndecided && !n.mandatory && !n.tooLarge && n.children == 0 &&
			n.end >= n.start && uint64(n.end-n.start) <= maxDur
	}
	order := l.undecided()
	slices.SortFunc(order, func(a, b int32) int {
		na, nb := &l.nodes[a], &l.nodes[b]
		switch {
		case na.parent != nb.parent:
			if na.parent < nb.parent {
				return -1
			}
			return 1
		case na.start != nb.start:
			if na.start < nb.start {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	same := func(a, b *node) bool {
		sa, sb := sc.spans[a.ref].span, sc.spans[b.ref].span
		return a.parent == b.parent && sa.Name() == sb.Name() && sa.Kind() == sb.Kind() &&
			sa.Status().Code() == sb.Status().Code()
	}
	for i := 0; i < len(order); {
		head := &l.nodes[order[i]]
		j := i + 1
		if eligible(head) {
			for j < len(order) && eligible(&l.nodes[order[j]]) && same(head, &l.nodes[order[j]]) {
				j++
			}
			if j-i >= l.cfg.Compression.MinRun {
				l.fold(order[i:j])
			}
		}
		i = j
	}
}

// undecided lists the nodes not yet kept, dropped or folded.
func (l *ladder) undecided() []int32 {
	order := make([]int32, 0, len(l.nodes))
	for i := range l.nodes {
		if l.nodes[i].state == nodeUndecided {
			order = append(order, int32(i))
		}
	}
	return order
}

// fold makes run[0] a composite of the run.
func (l *ladder) fold(run []int32) {
	sc, st := l.sc, l.st
	head := &l.nodes[run[0]]
	var sum, minD, maxD uint64
	minD = math.MaxUint64
	end := head.end
	for _, k := range run {
		n := &l.nodes[k]
		d := uint64(n.end - n.start)
		sum += d
		minD = min(minD, d)
		maxD = max(maxD, d)
		end = max(end, n.end)
	}
	span := sc.spans[head.ref].span
	span.SetEndTimestamp(end)
	head.end = end
	attrs := span.Attributes()
	attrs.PutInt(attrCompositeCount, int64(len(run)))
	attrs.PutInt(attrCompositeSum, int64(sum))
	attrs.PutInt(attrCompositeMin, int64(minD))
	attrs.PutInt(attrCompositeMax, int64(maxD))
	attrs.PutStr(attrCompositeStrategy, "exact_match")
	l.resize(head.ref)
	head.tooLarge = l.tooBig(head.ref)
	for _, k := range run[1:] {
		n := &l.nodes[k]
		n.state = nodeFolded
		n.repl = head.id
		st.dropped[n.id] = head.id
		sc.spans[n.ref].flags |= flagRemoved
		sc.removed++
		st.noteRemoved("", n.start, n.end, 0)
	}
	st.folded += len(run) - 1
	st.composites++
	l.tal.folded += len(run) - 1
	l.tal.composites++
}

// applyLimits is ladder step 2: over budget, on every live span; otherwise
// only on spans too large for a batch.
func (l *ladder) applyLimits(all bool) {
	sc := l.sc
	for i := range l.nodes {
		n := &l.nodes[i]
		if n.state != nodeUndecided || (!all && !n.tooLarge) {
			continue
		}
		r := &sc.spans[n.ref]
		res := l.limits.apply(r.span)
		if !res.changed {
			continue
		}
		l.tal.limits(res)
		l.st.truncated += res.truncated
		l.st.itemsRemoved += res.attrs + res.events + res.links
		// The markers can make a span larger than it was: check it again.
		l.resize(n.ref)
		n.tooLarge = l.tooBig(n.ref)
	}
}

func (l *ladder) resize(ref int32) {
	r := &l.sc.spans[ref]
	r.size = int32(marshaler.SpanSize(r.span))
	r.flags |= flagModified
}

// tooBig reports whether the span cannot fit a batch even alone.
func (l *ladder) tooBig(ref int32) bool {
	sc := l.sc
	r := &sc.spans[ref]
	scope := &sc.scopes[r.scope]
	headers := int64(scope.header) + int64(sc.resources[scope.resource].header) + 2*frameMax
	if spanCost(int(r.size))+headers > int64(l.cfg.MaxBatchBytes) {
		r.flags |= flagTooLarge
		return true
	}
	r.flags &^= flagTooLarge
	return false
}

// resolve walks from p past removed spans to the nearest span that is kept,
// not yet seen, or outside what the processor knows.
func (l *ladder) resolve(p uint64) uint64 {
	for steps := 0; p != 0 && steps < maxResolveSteps; steps++ {
		if k, ok := l.index[p]; ok {
			n := &l.nodes[k]
			if n.state == nodeDropped || n.state == nodeFolded {
				p = n.repl
				continue
			}
			return p
		}
		r, ok := l.st.dropped[p]
		if !ok || r == p {
			return p
		}
		p = r
	}
	return p
}

// selectSpans is ladder step 3. It decides first, breadth-first (shallow
// spans first, earliest first): mandatory spans are kept, the others while
// they fit. Only once every span of the chunk is decided does it resolve
// parents, so that a span is never re-parented to one dropped after it.
func (l *ladder) selectSpans(remS int, remB int64) {
	order := l.breadthFirst()
	l.decide(order, remS, remB)
	// Resolve: each removed span's replacement parent (ancestors first, so
	// chains stay short), then each kept span's parent.
	for _, k := range order {
		if n := &l.nodes[k]; n.state == nodeDropped {
			n.repl = l.resolve(n.parent)
			l.st.dropped[n.id] = n.repl
		}
	}
	for _, k := range order {
		if n := &l.nodes[k]; n.state == nodeKept {
			l.keep(n)
		}
	}
	l.copyResource()
}

// breadthFirst is the undecided spans, shallow spans first, earliest first.
func (l *ladder) breadthFirst() []int32 {
	order := l.undecided()
	slices.SortStableFunc(order, func(a, b int32) int {
		na, nb := &l.nodes[a], &l.nodes[b]
		if na.depth != nb.depth {
			return int(na.depth - nb.depth)
		}
		if na.start != nb.start {
			if na.start < nb.start {
				return -1
			}
			return 1
		}
		return 0
	})
	return order
}

// decide keeps or drops each span of order against remS spans and remB
// bytes left. Owed parents are estimated with what is decided so far.
func (l *ladder) decide(order []int32, remS int, remB int64) {
	maxNames := 0
	if l.cfg.Summary.Enabled {
		maxNames = l.cfg.Summary.MaxNames
	}
	for _, k := range order {
		n := &l.nodes[k]
		cost := spanCost(int(l.sc.spans[n.ref].size))
		owes := l.owesParent(n)
		reason := dropSpanBudget
		switch {
		case n.tooLarge:
			reason = dropTooLarge
		case n.mandatory:
			n.state = nodeKept
			if owes {
				remS--
			}
			continue
		default:
			need := 1
			if owes {
				need++
			}
			if need <= remS && cost <= remB {
				n.state = nodeKept
				remS -= need
				remB -= cost
				continue
			}
			if need <= remS {
				reason = dropByteBudget
			}
		}
		l.drop(n, reason, cost, maxNames)
	}
}

// owesParent reports whether keeping n owes a parent too: one outside the
// chunk whose fate is not yet known.
func (l *ladder) owesParent(n *node) bool {
	p := l.resolve(n.parent)
	if p == 0 {
		return false
	}
	_, inChunk := l.index[p]
	return !inChunk && l.unknown(p)
}

// keep records the kept span n: re-parented to its nearest kept ancestor,
// its parent owed when not yet known, and counted in the trace's state.
func (l *ladder) keep(n *node) {
	sc, st := l.sc, l.st
	r := &sc.spans[n.ref]
	p := l.resolve(n.parent)
	if p != n.parent {
		l.reparent(n, r, p)
	}
	if p != 0 {
		if _, inChunk := l.index[p]; !inChunk && l.unknown(p) {
			st.pending[p] = struct{}{}
		}
	}
	st.kept[n.id] = struct{}{}
	delete(st.pending, n.id)
	st.spans++
	st.bytes += spanCost(int(r.size))
	st.noteKept(n.id, p, n.start)
}

// reparent sets the parent of n (span r) to p, marking the original parent
// when the marker still fits a batch.
func (l *ladder) reparent(n *node, r *spanRef, p uint64) {
	r.span.SetParentSpanID(spanID(p))
	r.span.Attributes().PutStr(attrOriginalParent, spanID(n.parent).String())
	l.resize(n.ref)
	if l.tooBig(n.ref) {
		// The marker would push it past what a batch holds: keep
		// the span, without the marker.
		r.span.Attributes().Remove(attrOriginalParent)
		l.resize(n.ref)
		l.tooBig(n.ref)
	}
	l.st.reparented++
	l.tal.reparented++
}

// copyResource keeps a copy of the trace's resource once the ladder has
// affected the trace.
func (l *ladder) copyResource() {
	sc, st := l.sc, l.st
	if st.affected() && !st.hasResource && len(l.nodes) > 0 {
		r := &sc.spans[l.nodes[0].ref]
		st.resource = pcommon.NewResource()
		sc.resources[sc.scopes[r.scope].resource].rs.Resource().CopyTo(st.resource)
		st.hasResource = true
	}
}

// drop removes n; its replacement parent is resolved once the chunk is decided.
func (l *ladder) drop(n *node, reason int, cost int64, maxNames int) {
	sc, st := l.sc, l.st
	r := &sc.spans[n.ref]
	n.state = nodeDropped
	n.repl = n.parent
	r.flags |= flagRemoved
	sc.removed++
	st.droppedBy[reason]++
	st.droppedBytes += cost
	l.tal.dropped[reason]++
	st.noteRemoved(r.span.Name(), n.start, n.end, maxNames)
}

// depths returns each node's depth in the forest given by parents (-1: no
// parent in the set). Nodes on a parent cycle get depth 0.
func depths(parents []int32) []int32 {
	d := make([]int32, len(parents))
	for i := range d {
		d[i] = -1
	}
	stack := make([]int32, 0, 16)
	for i := range parents {
		if d[i] >= 0 {
			continue
		}
		stack = stack[:0]
		j := int32(i)
		for j >= 0 && d[j] < 0 && len(stack) <= len(parents) {
			d[j] = -2 // on the current path
			stack = append(stack, j)
			j = parents[j]
		}
		base := int32(-1)
		if j >= 0 && d[j] >= 0 {
			base = d[j]
		}
		// j < 0: the top of the path is a root; d[j] == -2: a cycle, whose
		// members start again at depth 0.
		for k := len(stack) - 1; k >= 0; k-- {
			base++
			d[stack[k]] = base
		}
	}
	return d
}
