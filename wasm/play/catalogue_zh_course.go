package play

// 第 5 讲之后的课程（issue 29）的中文文本：前缀缓存、多副本路由与投机解码；
// 并入 catalogueZH。
var courseZH = map[string]string{
	"param.pcache": "前缀缓存",
	"param.sys":    "共享系统提示",
	"param.turns":  "每个会话的轮数",
	"param.think":  "两轮之间的思考时间",

	"preset.prefix-cache.title": "共享系统提示，命中缓存",
	"preset.prefix-cache.about": "每个 200 token 的问题前都有同样的 2000 token 系统提示，输出 64 token，8 请求/秒，开启前缀缓存：每个提示的大部分都在缓存里找到，只需 prefill 问题本身。",
	"param.reps":                "副本数",
	"param.route":               "路由器",
	"param.stale":               "路由器所见负载的滞后",
	"param.rthresh":             "前缀感知路由的负载余量",
	"preset.routing.title":      "这个请求该去哪？四个副本，多轮会话",
	"preset.routing.about":      "每个会话 8 轮，历史越来越长，24 请求/秒打到 4 个开启前缀缓存的副本上：前缀感知路由把每一轮送到缓存着它历史的副本；换成轮询，命中（和 TTFT）就没了。",
	"param.spk":                 "每步草稿 token 数",
	"param.spa":                 "草稿接受率",
	"param.spal":                "各草稿位置的接受率",
	"param.spd":                 "草稿来源",
	"param.spdc":                "MTP 头每个草稿的代价（占一步）",
	"preset.speculative.title":  "投机解码是押注闲置的算力",
	"preset.speculative.about":  "一块 H100，512/256 token，2 请求/秒，MTP 头每步提出 4 个草稿 token、每个接受率 0.6：每个用户的 token 来得快了约一倍；把速率调高，每个序列验证 5 个 token 会让每一步都受算力所限。",
}

func init() {
	for k, v := range courseZH {
		catalogueZH[k] = v
	}
}
