package synthetic

// agent simulates an invoke_agent span: an orchestrator (depth <
// agent.depth) plans, delegates tasks that form a DAG to sub-agents and
// synthesizes their results; a leaf agent loops over chat and execute_tool.
func (g *generator) agent(r *request, parent int32, t int64, depth int, name, role string, task int) callResult {
	idx := g.add(r, spanRec{op: opAgent, parent: parent, start: t, name: name, role: role, task: task, ttft: -1})
	m := g.chat[g.chatPick.pick(g.rng)]
	t += g.uniform(0.0002, 0.001)
	res := callResult{span: idx}
	if depth < g.cfg.Agent.Depth {
		res = g.orchestrate(r, idx, t, depth, m)
	} else {
		res = g.loop(r, idx, t, m)
	}
	s := &r.spans[idx]
	s.end = res.end + g.uniform(0.0001, 0.0005)
	s.fault = res.fault
	return callResult{end: s.end, fault: res.fault, span: idx}
}

func (g *generator) orchestrate(r *request, self int32, t int64, depth int, m *modelState) callResult {
	plan := g.chatCall(r, self, t, m, 0, finishToolCalls)
	if plan.fault != nil {
		return plan
	}
	n := g.cfg.Agent.FanOut
	ends := make([]int64, n)
	spans := make([]int32, n)
	start := plan.end
	latest := start
	var failed *faultSpec
	for j := range n {
		ts, links := g.dependencies(start, ends[:j], spans[:j])
		name := subAgentNames[j%len(subAgentNames)]
		res := g.agent(r, self, ts+g.uniform(0.0001, 0.0005), depth+1, name, roleAgent, j+1)
		r.spans[res.span].links = links
		ends[j], spans[j] = res.end, res.span
		latest = max(latest, res.end)
		if res.fault != nil {
			failed = res.fault
			break
		}
	}
	if failed != nil {
		return callResult{end: latest, fault: failed}
	}
	return g.chatCall(r, self, latest+g.uniform(0.0001, 0.0005), m, 0, finishStop)
}

// dependencies draws which earlier tasks (their end times and span indexes
// given) a new task waits on; it returns the links and the task's start.
func (g *generator) dependencies(start int64, ends []int64, spans []int32) (int64, []int32) {
	ts := start
	var links []int32
	for i := range ends {
		if g.rng.Float64() < g.cfg.Agent.DependencyProbability {
			links = append(links, spans[i])
			ts = max(ts, ends[i])
		}
	}
	return ts, links
}

func (g *generator) loop(r *request, self int32, t int64, m *modelState) callResult {
	a := &g.cfg.Agent
	steps := a.MinSteps + int(g.rng.Uint64N(uint64(a.MaxSteps-a.MinSteps+1)))
	var res callResult
	for s := range steps {
		finish := finishToolCalls
		if s == steps-1 {
			finish = finishStop
		}
		res = g.chatCall(r, self, t, m, 0, finish)
		if res.fault != nil || s == steps-1 {
			return res
		}
		t = g.runTools(r, self, res.end) + g.uniform(0.0001, 0.0005)
	}
	return res
}

// runTools simulates the one or two tools the model asked for at t, run in
// parallel; it returns when the last one ends.
func (g *generator) runTools(r *request, self int32, t int64) int64 {
	tools := g.cfg.Agent.Tools
	calls := 1 + int(g.rng.Uint64N(2))
	end := t
	for range calls {
		tool := int(g.rng.Uint64N(uint64(len(tools))))
		ts := t + g.uniform(0.0001, 0.0003)
		te := ts + nanos(g.toolLat.Sample())
		g.add(r, spanRec{op: opTool, parent: self, start: ts, end: te, name: tools[tool], task: tool, ttft: -1})
		end = max(end, te)
	}
	return end
}
