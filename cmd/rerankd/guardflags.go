package main

import (
	"flag"
	"strings"

	"github.com/rerankd/rerankd/serve"
)

// defineGuardFlags adds serve's web-page guards (serve/origin.go): the
// Host names and browser origins accepted besides the server's own.
// Kept in one place so the flag set can move as a block.
func defineGuardFlags(fs *flag.FlagSet, cfg *serve.Config) {
	list := func(dst *[]string) func(string) error {
		return func(v string) error {
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					*dst = append(*dst, s)
				}
			}
			return nil
		}
	}
	fs.Func("allowed-hosts", "comma-separated Host names (name or name:port, * for any) a loopback connection may use besides localhost, 127.0.0.1 and [::1]: "+
		"set it behind a local reverse proxy that forwards another name (the default refuses them as DNS rebinding)", list(&cfg.AllowedHosts))
	fs.Func("allowed-origins", "comma-separated browser origins (https://app.example.com, * for any) whose pages may write memories, rerank or call /mcp; "+
		"the server's own pages are always allowed, other origins get 403", list(&cfg.AllowedOrigins))
}
