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
}

func init() {
	for k, v := range courseZH {
		catalogueZH[k] = v
	}
}
