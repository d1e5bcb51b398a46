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
}

func init() {
	for k, v := range courseEN {
		catalogueEN[k] = v
	}
}
