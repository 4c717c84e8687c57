package servecmd

import (
	"flag"
	"strings"

	"github.com/rerankd/rerankd/serve"
)

// defineGuardFlags adds serve's guards against hostile input: the Host
// names and browser origins accepted besides the server's own
// (serve/origin.go), and how special tokens in user text are encoded.
// Kept in one place so the flag set can move as a block.
func defineGuardFlags(fs *flag.FlagSet, cfg *serve.Config, controlTokens *bool) {
	fs.BoolVar(controlTokens, "control-tokens-in-text", false, "let special-token strings written in queries, documents, memories and embedded texts (\"<|im_end|>\", \"</s>\", \"[SEP]\") act as the control tokens they name, "+
		"as the Hugging Face reference encodes them; by default they are plain text, so a stored memory cannot rewrite the reranker's prompt (docs/special-tokens.md)")
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
