package serve

import (
	"net"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// hostPolicy guards every route against web pages: DNS rebinding (a page
// whose name resolves to 127.0.0.1 talks to a loopback server under its
// own Host name) and cross-site requests (a page POSTs to the server from
// another origin, e.g. with fetch(..., {mode: "no-cors"}), which needs no
// preflight).
//
//   - A request that arrived on a loopback address must name a loopback
//     host (localhost, 127.0.0.1, [::1], any port) or one of AllowedHosts.
//     The address the connection reached is checked, not the listener's,
//     so a wildcard listener reached through loopback is guarded too.
//   - A request that may change state or run a tool (every method but GET,
//     HEAD and OPTIONS, /mcp included) is refused when a browser marks it
//     cross-site: an Origin whose host is not the request's Host nor in
//     AllowedOrigins, or Sec-Fetch-Site other than same-origin or none.
//     Clients that are not browsers send neither header and pass.
type hostPolicy struct {
	anyHost, anyOrigin bool
	hosts              map[string]bool // lowercased; "name" matches any port, "name:port" one
	origins            map[string]bool // lowercased scheme://host[:port]
}

func newHostPolicy(hosts, origins []string) *hostPolicy {
	p := &hostPolicy{hosts: map[string]bool{}, origins: map[string]bool{}}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "*" {
			p.anyHost = true
		}
		p.hosts[h] = true
	}
	for _, o := range origins {
		o = strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/"))
		if o == "*" {
			p.anyOrigin = true
		}
		p.origins[o] = true
	}
	return p
}

// validateHostLists reports malformed allow-list entries.
func validateHostLists(hosts, origins []string) []string {
	var probs []string
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" || strings.ContainsAny(h, "/ @") {
			probs = append(probs, "allowed host "+quoteShort(h)+": want a host name, optionally with :port (no scheme or path), or *")
		}
	}
	for _, o := range origins {
		o = strings.TrimSpace(o)
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.TrimRight(u.Path, "/") != "" || u.User != nil {
			probs = append(probs, "allowed origin "+quoteShort(o)+": want scheme://host[:port] such as https://app.example.com, or *")
		}
	}
	return probs
}

func quoteShort(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return `"` + s + `"`
}

// isLoopbackHost reports whether a Host value (name or name:port) names
// this machine through loopback.
func isLoopbackHost(host string) bool {
	name := hostName(host)
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// hostName strips the port and IPv6 brackets and lowercases.
func hostName(host string) string {
	host = strings.ToLower(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(host, "[]")
}

func (p *hostPolicy) hostAllowed(host string) bool {
	// No Host at all (HTTP/1.0): browsers always send one, so no page is
	// behind it.
	if p.anyHost || host == "" || isLoopbackHost(host) {
		return true
	}
	h := strings.ToLower(host)
	return p.hosts[h] || p.hosts[hostName(h)]
}

// originAllowed: the same host as the request (any scheme: a TLS proxy
// in front changes it), or listed.
func (p *hostPolicy) originAllowed(origin, host string) bool {
	o := strings.ToLower(strings.TrimRight(origin, "/"))
	if p.anyOrigin || p.origins[o] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (sandboxed frames, file://) included
	}
	return strings.EqualFold(u.Host, host)
}

func (p *hostPolicy) middleware(c *fiber.Ctx) error {
	host := string(c.Request().Host())
	if addr, ok := c.Context().LocalAddr().(*net.TCPAddr); ok && addr.IP.IsLoopback() && !p.hostAllowed(host) {
		return newError(KindForbidden, "Host %s is not this server's name: a loopback server answers only localhost, 127.0.0.1 "+
			"and [::1] (DNS rebinding guard); list other names with --allowed-hosts", quoteShort(host))
	}
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	origin := c.Get(fiber.HeaderOrigin)
	if origin != "" {
		if !p.originAllowed(origin, host) {
			return newError(KindForbidden, "Origin %s may not call this server (cross-origin guard); list trusted pages with --allowed-origins", quoteShort(origin))
		}
		return c.Next()
	}
	switch site := c.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return newError(KindForbidden, "a %s request without an Origin may not call this server (cross-origin guard)", quoteShort(site))
	}
	return c.Next()
}
