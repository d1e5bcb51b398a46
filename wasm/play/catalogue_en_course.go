package play

// The English texts of the course after lecture 5 (issue 29): prefix
// caching, routing across replicas and speculative decoding; merged into
// catalogueEN.
var courseEN = map[string]string{
	"param.pcache": "Prefix caching",
	"param.sys":    "Shared system prompt",
	"param.turns":  "Turns per session",
	"param.think":  "Think time between turns",

	"preset.prefix-cache.title": "A shared system prompt, cached",
	"preset.prefix-cache.about": "2000 tokens of system prompt before every 200-token question, 64-token answers at 8 req/s, prefix caching on: most of each prompt is found in the cache and only the question is prefilled.",
	"param.reps":                "Replicas",
	"param.route":               "Router",
	"param.stale":               "Router's load figures, age",
	"param.rthresh":             "Prefix-aware router's load slack",
	"preset.routing.title":      "Where should this request go? Four replicas, multi-turn sessions",
	"preset.routing.about":      "Sessions of 8 turns whose history grows, at 24 req/s over 4 replicas with prefix caching: the prefix-aware router sends each turn where its history is cached; switch it to round-robin and the hits (and TTFT) go.",
	"param.spk":                 "Draft tokens per step",
	"param.spa":                 "Draft acceptance rate",
	"param.spal":                "Acceptance rate per draft position",
	"param.spd":                 "Drafter",
	"param.spdc":                "MTP head cost per draft (of a step)",
	"preset.speculative.title":  "Speculation is a bet on idle compute",
	"preset.speculative.about":  "One H100, 512/256 tokens at 2 req/s, 4 draft tokens from MTP heads accepted at 0.6 each: each user's tokens come about twice as fast; raise the rate and verifying 5 tokens per sequence makes every step compute-bound.",
}

func init() {
	for k, v := range courseEN {
		catalogueEN[k] = v
	}
}
