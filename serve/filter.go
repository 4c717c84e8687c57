package serve

import (
	"fmt"

	"github.com/rerankd/rerankd/api"
)

// filterParam reads GET's ?filter=, a JSON filter, strictly (nil: none);
// the memory service compiles and validates it.
func filterParam(raw string) (*api.Filter, error) {
	if raw == "" {
		return nil, nil
	}
	f, err := decodeStrictBody[api.Filter]([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	return f, nil
}
