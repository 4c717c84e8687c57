package serve

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
)

// TestInfoTemplate: /info reports the configured prompt template, and
// nothing when none is set; the OpenAPI document describes each field.
func TestInfoTemplate(t *testing.T) {
	tmpl := &api.TemplateInfo{Name: "mxbai-rerank-v2", Source: "rerankd_template.json", Prefix: "<p>", Query: "query: {query}\n",
		Document: "document: {document}\n", Suffix: "<s>", YesToken: "1", NoToken: "0", YesID: 16, NoID: 15}
	for _, c := range []struct {
		name string
		set  *api.TemplateInfo
	}{{"set", tmpl}, {"unset", nil}} {
		cfg := DefaultConfig()
		cfg.Template = c.set
		var info api.Info
		decodeInto(t, do(t, http.MethodGet, start(t, cfg, &fakeBackend{})+"/info", "", ""), &info)
		if !reflect.DeepEqual(info.Template, c.set) {
			t.Errorf("%s: /info template %+v, want %+v", c.name, info.Template, c.set)
		}
	}
	ty := reflect.TypeFor[api.TemplateInfo]()
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(string(openAPI), `"TemplateInfo"`) || !strings.Contains(string(openAPI), `"`+name+`": {`) {
			t.Errorf("openapi.json does not describe TemplateInfo.%s", name)
		}
	}
}
