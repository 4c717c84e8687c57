package serve

import (
	"fmt"
	"strings"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval/filter"
)

// compileFilter validates the API's filter and compiles it (nil: none);
// every problem is one 422 naming the conditions.
func compileFilter(f *api.Filter) (*filter.Matcher, error) {
	if f == nil {
		return nil, nil
	}
	m, err := filter.Compile(filterOf(f))
	if err != nil {
		return nil, newError(KindValidation, "%s", strings.TrimPrefix(trimPrefix(err), "invalid filter: "))
	}
	return m, nil
}

func filterOf(f *api.Filter) *filter.Filter {
	return &filter.Filter{Must: conditionsOf(f.Must), Should: conditionsOf(f.Should), MustNot: conditionsOf(f.MustNot)}
}

func conditionsOf(cs []api.Condition) []filter.Condition {
	if cs == nil {
		return nil
	}
	out := make([]filter.Condition, len(cs))
	for i, c := range cs {
		fc := filter.Condition{Key: c.Key}
		if m := c.Match; m != nil {
			fc.Match = &filter.Match{Value: m.Value, Any: m.Any, Except: m.Except}
		}
		if r := c.Range; r != nil {
			fc.Range = &filter.Range{GT: r.GT, GTE: r.GTE, LT: r.LT, LTE: r.LTE}
		}
		if c.IsEmpty != nil {
			fc.IsEmpty = c.IsEmpty.Key
			if fc.IsEmpty == "" {
				fc.IsEmpty = "metadata." // the empty metadata key: Compile names it
			}
		}
		if c.Must != nil || c.Should != nil || c.MustNot != nil {
			fc.Nested = filterOf(&api.Filter{Must: c.Must, Should: c.Should, MustNot: c.MustNot})
		}
		out[i] = fc
	}
	return out
}

// filterParam reads GET's ?filter=, a JSON filter, strictly.
func filterParam(raw string) (*filter.Matcher, error) {
	if raw == "" {
		return nil, nil
	}
	f, err := decodeStrictBody[api.Filter]([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	return compileFilter(f)
}
