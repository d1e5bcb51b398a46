package lab

import (
	"fmt"
	"math"

	"servelab/sim"
)

// DefaultTokensPerWord is the prompt tokens a word of run.py's filler counts
// for unless told: 1, as `servelab labserver` counts by default. On a real
// tokenizer each five-digit word is more (about 3 on Llama 3's, which
// splits digits in threes, and one more token for the space on others).
const DefaultTokensPerWord = 1.0

// MaxTokensPerWord bounds the factor, as labserver's --tokens-per-word.
const MaxTokensPerWord = 1000

// InTokens returns w with its prompt lengths, which run.py and servelab
// measure write in words (their prompts are that many space-separated
// numbers), in tokens: each times tokensPerWord, rounded up as a server
// counts a prompt's tokens. Output lengths are max_tokens, tokens already.
// It returns an error when tokensPerWord is not in (0, MaxTokensPerWord] or
// a length would pass sim.MaxTokens.
func InTokens(w sim.LabWorkload, tokensPerWord float64) (sim.LabWorkload, error) {
	if !(tokensPerWord > 0) || tokensPerWord > MaxTokensPerWord {
		return w, fmt.Errorf("tokens per word must be in (0, %d], got %g", MaxTokensPerWord, tokensPerWord)
	}
	for _, n := range []*int{&w.ShortInputLen, &w.LongInputLen} {
		t := math.Ceil(float64(*n) * tokensPerWord)
		if t > sim.MaxTokens {
			return w, fmt.Errorf("%d words at %g tokens per word are %.0f tokens, over the %d a prompt may have", *n, tokensPerWord, t, sim.MaxTokens)
		}
		*n = int(t)
	}
	return w, nil
}
