package companion

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidNamesAndIDs checks the hand-written checks against the patterns
// they stand for, on names and IDs near every boundary.
func TestValidNamesAndIDs(t *testing.T) {
	name := regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	id := regexp.MustCompile(`^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$`)
	cases := []string{"", "a", "lab-1", "A.b_c-9", strings.Repeat("x", 64), strings.Repeat("x", 65), "a b", "é", "a/b", "..",
		"20261201-120000-abcdef", "20261201-120000-ABCDEF", "20261201-120000-abcde", "20261201-1200000abcdef", "2026120a-120000-abcdef",
		"20261201-12000x-abcdef", "20261201-120000-abcdeg", "20261201-120000-abcdef0", "20261201_120000-abcdef", "x20261201-120000-abcde"}
	for _, c := range cases {
		if got, want := validName(c), name.MatchString(c); got != want {
			t.Errorf("validName(%q) = %v, the pattern says %v", c, got, want)
		}
		if got, want := validID(c), id.MatchString(c); got != want {
			t.Errorf("validID(%q) = %v, the pattern says %v", c, got, want)
		}
	}
}
