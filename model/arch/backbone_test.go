package arch

import "testing"

func TestBackbone(t *testing.T) {
	c := Tiny()
	c.TieWordEmbeddings = false
	if _, ok := c.Shapes()[LMHead]; !ok {
		t.Fatal("untied config lists no lm_head")
	}
	b := c.Backbone()
	if _, ok := b.Shapes()[LMHead]; ok {
		t.Error("backbone config lists lm_head")
	}
	if c.TieWordEmbeddings {
		t.Error("Backbone modified its receiver")
	}
	if len(b.Shapes()) != len(c.Shapes())-1 {
		t.Errorf("backbone has %d tensors, want %d", len(b.Shapes()), len(c.Shapes())-1)
	}
	for _, tc := range []struct {
		archs []string
		name  string
		want  bool
	}{
		{[]string{ArchCausalLM}, ArchCausalLM, true},
		{[]string{ArchCausalLM}, ArchModel, false},
		{nil, ArchModel, false},
		{[]string{"X", ArchModel}, ArchModel, true},
	} {
		c.Architectures = tc.archs
		if got := c.HasArchitecture(tc.name); got != tc.want {
			t.Errorf("HasArchitecture(%v, %s) = %v", tc.archs, tc.name, got)
		}
	}
}
