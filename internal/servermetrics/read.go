package servermetrics

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one scrape of a server's /metrics read by role: the gauges (the
// sum over series; the maximum for fractions) and the counters (the sum
// over series) of the server whose names the page carries most of, each
// role under its newest name present.
type Sample struct {
	Server   string
	Names    map[string]string // role → the name read
	Gauges   map[string]float64
	Counters map[string]float64
}

// Read parses a page in the Prometheus text format and reads it by role;
// the error names what could not be parsed. A page with none of the
// table's names gives an empty Server.
func Read(r io.Reader) (Sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Sample{}, fmt.Errorf("metrics page: %w", err)
	}
	byServer := rolesByServer(fams)
	s := Sample{Names: map[string]string{}, Gauges: map[string]float64{}, Counters: map[string]float64{}}
	for server, roles := range byServer {
		if len(roles) > len(byServer[s.Server]) || (len(roles) == len(byServer[s.Server]) && (s.Server == "" || server < s.Server)) {
			s.Server = server
		}
	}
	for role, f := range byServer[s.Server] {
		v, ok := familyValue(f.def, f.fam)
		if !ok {
			continue
		}
		s.Names[role] = f.def.Name
		if f.def.Kind == Counter {
			s.Counters[role] = v
		} else if f.def.Kind == Gauge {
			s.Gauges[role] = v
		}
	}
	return s, nil
}

// roleFamily is the family read for a role, and its table entry.
type roleFamily struct {
	def Def
	fam *dto.MetricFamily
}

// rolesByServer sorts the page's families of the table's names by server
// and role, keeping for each role the family of the lowest-rank name.
func rolesByServer(fams map[string]*dto.MetricFamily) map[string]map[string]roleFamily {
	byServer := map[string]map[string]roleFamily{}
	for _, n := range slices.Sorted(maps.Keys(fams)) {
		f := fams[n]
		def, ok := Lookup(n)
		if !ok || len(f.Metric) == 0 {
			continue
		}
		roles := byServer[def.Server]
		if roles == nil {
			roles = map[string]roleFamily{}
			byServer[def.Server] = roles
		}
		if cur, seen := roles[def.Role]; !seen || def.Rank < cur.def.Rank {
			roles[def.Role] = roleFamily{def, f}
		}
	}
	return byServer
}

// familyValue is a family's value for its role: gauges summed over series
// (fractions: their maximum), counters summed (a histogram's sum for a
// counter role); false for a histogram role or no usable sample.
func familyValue(def Def, f *dto.MetricFamily) (float64, bool) {
	v, seen := 0.0, false
	for _, m := range f.Metric {
		var x float64
		switch {
		case def.Kind == Gauge && m.Gauge != nil:
			x = m.Gauge.GetValue()
		case def.Kind == Gauge && m.Untyped != nil:
			x = m.Untyped.GetValue()
		case def.Kind == Counter && m.Counter != nil:
			x = m.Counter.GetValue()
		case def.Kind == Counter && m.Histogram != nil:
			x = m.Histogram.GetSampleSum()
		default:
			continue
		}
		x *= def.Scale
		if math.IsNaN(x) || math.IsInf(x, 0) || (IsFraction(def.Role) && x < 0) {
			continue
		}
		if IsFraction(def.Role) && seen {
			v = math.Max(v, x)
		} else {
			v += x
		}
		seen = true
	}
	return v, seen
}
