package serve

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/scoring"
)

// Limits are the scheduler's batching limits, reported by /info.
type Limits struct {
	QueueSize, BatchTokens, MaxBatch int
}

// Server is the HTTP service around one backend.
type Server struct {
	app     *fiber.App
	cfg     Config
	backend scoring.Backend
	limits  Limits
	metrics *Metrics
	log     *slog.Logger
	keys    *keyring
	mem     *retrieval.Service // nil: memory API disabled
	mcp     fiber.Handler      // nil: /mcp disabled
	emb     *EmbedModel        // nil: no embedding routes
	started time.Time
	ready   atomic.Bool
	tracer  trace.Tracer

	healthMu sync.Mutex
	healthOK time.Time

	// storeState and unavailLog keep an outage of the shared store from
	// writing a line per probe and per request.
	storeState storeState
	unavailLog logLimiter
}

// New builds the server; Serve starts it.
func New(cfg Config, b scoring.Backend, limits Limits, m *Metrics, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if m == nil {
		m = NewMetrics()
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, backend: b, started: time.Now(), limits: limits, metrics: m, log: log, keys: newKeyring(cfg.APIKeys, cfg.KeyScopes),
		unavailLog: logLimiter{every: 30 * time.Second}}
	tp := cfg.Tracer
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	s.tracer = tp.Tracer(tracerName)
	s.app = fiber.New(fiber.Config{
		BodyLimit:             cfg.MaxBodyBytes,
		ReadBufferSize:        cfg.MaxHeaderBytes,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.RequestTimeout + 10*time.Second,
		IdleTimeout:           2 * time.Minute,
		DisableStartupMessage: true,
		// A body is JSON or a 415; never parse it as a multipart form first
		// (a malformed one would be a plain 400 before our handlers run).
		DisablePreParseMultipartForm: true,
		ErrorHandler:                 s.errorHandler,
		AppName:                      "rerankd",
	})
	s.app.Use(s.traced, s.observe, newHostPolicy(cfg.AllowedHosts, cfg.AllowedOrigins).middleware)
	s.app.Get("/health", s.handleHealth)
	s.app.Get("/ready", s.handleReady)
	s.routeDocs()
	s.app.Use(s.keys.middleware)
	for _, p := range []string{"/rerank", "/v1/rerank", "/v2/rerank"} {
		s.app.Post(p, s.handleRerank)
	}
	s.routeMemory()
	s.app.Post("/v1/embeddings", s.handleEmbeddings)
	s.app.Post("/embed", s.handleTEIEmbed)
	s.app.Get("/v1/models", s.handleModels)
	s.app.Post("/tokenize", s.handleTokenize)
	s.app.Post("/mcp", s.handleMCP)
	s.app.Get("/info", s.handleInfo)
	s.app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})))
	s.app.Get("/openapi.json", s.handleOpenAPI)
	// No catch-all handler: fiber's own "no route" error tells a path no
	// route has (404) from a method the path's routes lack (405, with
	// Allow listing theirs), and errorHandler words both.
	s.app.Server().Handler = methodGuard(s.app.Server().Handler)
	return s, nil
}

// methodGuard answers requests with a method fiber does not know (e.g. a
// lowercase "post") in the API's JSON error shape; fiber itself would send
// a plain-text 400 before any of our handlers run.
func methodGuard(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	body, _ := json.Marshal(api.NewError("unknown HTTP method (methods are case-sensitive)", string(KindMethod)))
	return func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Method()) {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete,
			fiber.MethodConnect, fiber.MethodOptions, fiber.MethodTrace, fiber.MethodPatch:
			next(ctx)
		default:
			ctx.SetStatusCode(statusOf[KindMethod])
			ctx.SetContentType(fiber.MIMEApplicationJSON)
			ctx.SetBody(body)
		}
	}
}

// observe records every request's outcome and duration; logs carry no
// request text.
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	if err != nil {
		if herr := s.errorHandler(c, err); herr != nil {
			return herr
		}
	}
	route := c.Route().Path
	if sc := c.Response().StatusCode(); sc == fiber.StatusNotFound || sc == fiber.StatusMethodNotAllowed {
		route = "unmatched" // bounded label values
	}
	code := strconv.Itoa(c.Response().StatusCode())
	s.metrics.observeRequest(route, code, time.Since(start))
	s.log.Debug("request", "method", c.Method(), "route", route, "code", code, "ms", time.Since(start).Milliseconds())
	return nil
}

// errorHandler writes the one JSON error shape for every failure.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	var e *Error
	switch {
	case errors.As(err, &fe) && fe.Code == fiber.StatusNotFound:
		e = newError(KindNotFound, "no route %s %s", c.Method(), c.Path())
	case errors.As(err, &fe) && fe.Code == fiber.StatusMethodNotAllowed:
		e = newError(KindMethod, "%s %s is not allowed; this route answers %s", c.Method(), c.Path(), c.GetRespHeader(fiber.HeaderAllow))
	case errors.As(err, &fe):
		k := map[int]Kind{fiber.StatusRequestEntityTooLarge: KindTooLarge,
			fiber.StatusBadRequest:                  KindInvalid,
			fiber.StatusRequestHeaderFieldsTooLarge: KindTooLarge, fiber.StatusRequestTimeout: KindTimeout}[fe.Code]
		if k == "" {
			k = KindInvalid
		}
		c.Locals(errorKindKey, k)
		if fe.Code == fiber.StatusRequestEntityTooLarge || fe.Code == fiber.StatusRequestHeaderFieldsTooLarge {
			// fasthttp stops reading and closes the connection: drain
			// what the client still sends, or the close resets the
			// connection and the client never sees this answer.
			lingerOnClose(c.Context().Conn())
		}
		return s.writeError(c, fe.Code, k, fe.Message, "")
	default:
		e = classify(err)
	}
	switch {
	case e.Kind == KindUnavailable || e.Kind == KindNotReady:
		// A condition that lasts (the store down, the server starting or
		// stopping) fails every request alike: one line per interval.
		if ok, dropped := s.unavailLog.allow(time.Now()); ok {
			s.log.Warn("request refused: retry later", "path", c.Path(), "kind", e.Kind, "err", e.Err, "not_logged_since_last", dropped)
		}
	case e.Status() >= 500 || e.Kind == KindBackend:
		s.log.Error("request failed", "path", c.Path(), "kind", e.Kind, "err", e.Err)
	}
	c.Locals(errorKindKey, e.Kind)
	if e.Kind == KindOverloaded || e.Kind == KindUnavailable {
		c.Set(fiber.HeaderRetryAfter, "1")
	}
	return s.writeError(c, e.Status(), e.Kind, e.Msg, e.Param)
}

// openAIRoutes answer errors in OpenAI's shape, for the OpenAI SDKs.
var openAIRoutes = []string{"/v1/embeddings", "/v1/models"}

// writeError writes an error body: OpenAI's shape on its routes, the API's
// one shape (which is also text-embeddings-inference's) elsewhere.
func (s *Server) writeError(c *fiber.Ctx, status int, k Kind, msg, param string) error {
	if !slices.Contains(openAIRoutes, strings.TrimRight(c.Path(), "/")) {
		return c.Status(status).JSON(api.NewError(msg, string(k)))
	}
	if status == fiber.StatusUnprocessableEntity {
		status = fiber.StatusBadRequest // OpenAI answers every unacceptable field 400
	}
	typ := "invalid_request_error"
	switch {
	case status == fiber.StatusUnauthorized:
		typ = "authentication_error"
	case status == fiber.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status >= 500 || k == KindBackend:
		typ = "server_error"
	}
	code := string(k)
	d := api.OpenAIErrorDetail{Message: msg, Type: typ, Code: &code}
	if param != "" {
		d.Param = &param
	}
	return c.Status(status).JSON(api.OpenAIError{Error: d})
}

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.ready.Store(true)
	return s.app.Listener(lingerListener{ln})
}

// Shutdown stops accepting connections, lets in-flight requests finish
// (until ctx ends), then closes the backend, which drains its queue.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	err := s.app.ShutdownWithContext(ctx)
	if berr := s.backend.Close(ctx); err == nil {
		err = berr
	}
	return err
}
