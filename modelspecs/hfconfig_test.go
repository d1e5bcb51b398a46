package modelspecs

import (
	"strings"
	"testing"
)

// A negative max_position_embeddings is refused, not taken as "unlimited".
func TestHFConfigNegativeMaxPosition(t *testing.T) {
	in := `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": -1}`
	if _, err := FromHFConfig([]byte(in), "x"); err == nil || !strings.Contains(err.Error(), "max_position_embeddings") {
		t.Errorf("max_position_embeddings -1: %v, want an error naming it", err)
	}
	ok := strings.Replace(in, "-1", "4096", 1)
	if m, err := FromHFConfig([]byte(ok), "x"); err != nil || m.MaxContext != 4096 {
		t.Errorf("max_position_embeddings 4096: %+v, %v", m, err)
	}
}
