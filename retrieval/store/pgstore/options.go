package pgstore

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/rerankd/rerankd/retrieval/store"
)

// Defaults that DefaultOptions returns and Open applies to zero fields.
const (
	DefaultOpTimeout      = 10 * time.Second
	DefaultConnectTimeout = 5 * time.Second
	DefaultMaxConns       = 10
)

// Options configures Open. The zero value is valid: every zero field takes
// its default. The URL's own pool_max_conns and connect_timeout are
// replaced by MaxConns and ConnectTimeout.
type Options struct {
	// Dimension, when non-zero, is the only vector dimension writes accept;
	// zero accepts any dimension in 1..store.MaxDimension (as the bbolt
	// store).
	Dimension int

	// OpTimeout bounds every call: the Backend methods have no context, so
	// each runs under its own deadline of OpTimeout (the Feed methods under
	// their ctx and OpTimeout, whichever ends first; Listen only under its
	// ctx). A call that runs out of time fails with an error wrapping
	// store.ErrUnavailable. Zero means DefaultOpTimeout (10 s); negative is
	// invalid.
	OpTimeout time.Duration

	// ConnectTimeout bounds one attempt to open a connection (TCP connect,
	// TLS, authentication). Zero means DefaultConnectTimeout (5 s);
	// negative is invalid.
	ConnectTimeout time.Duration

	// MaxConns is the most connections the pool holds. Each running Listen
	// holds one more of its own. Zero means DefaultMaxConns (10); negative
	// or above 10000 is invalid.
	MaxConns int

	// Logger receives connection state changes (unreachable, reachable
	// again) and applied migrations. Nil discards them. Nothing logged
	// contains the password.
	Logger *slog.Logger
}

// DefaultOptions returns Options with every default spelled out.
func DefaultOptions() Options {
	return Options{
		OpTimeout:      DefaultOpTimeout,
		ConnectTimeout: DefaultConnectTimeout,
		MaxConns:       DefaultMaxConns,
	}
}

// maxMaxConns bounds MaxConns (pgxpool takes an int32; a server allows far
// fewer connections anyway).
const maxMaxConns = 10000

// Validate reports every invalid option at once, in one error wrapping
// store.ErrInvalid.
func (o Options) Validate() error {
	var errs []error
	if o.Dimension < 0 || o.Dimension > store.MaxDimension {
		errs = append(errs, fmt.Errorf("option Dimension %d not in 0..%d", o.Dimension, store.MaxDimension))
	}
	if o.OpTimeout < 0 {
		errs = append(errs, fmt.Errorf("option OpTimeout %v is negative", o.OpTimeout))
	}
	if o.ConnectTimeout < 0 {
		errs = append(errs, fmt.Errorf("option ConnectTimeout %v is negative", o.ConnectTimeout))
	}
	if o.MaxConns < 0 || o.MaxConns > maxMaxConns {
		errs = append(errs, fmt.Errorf("option MaxConns %d not in 0..%d", o.MaxConns, maxMaxConns))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: pgstore: %w", store.ErrInvalid, errors.Join(errs...))
}

func (o Options) withDefaults() Options {
	if o.OpTimeout == 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// maxConns32 is MaxConns as pgxpool takes it (Validate bounds it).
func (o Options) maxConns32() int32 { return int32(min(o.MaxConns, math.MaxInt32)) }
