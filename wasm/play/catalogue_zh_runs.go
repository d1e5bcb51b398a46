//go:build js && wasm

package play

// 对比模式、KV 缓存、分离式部署的绘制、触控与上传的中文文本（issue 11），并入 catalogueZH。
var runsZH = map[string]string{
	"cmp.title":      "对比两次运行",
	"cmp.on":         "与运行 B 对比（同一负载，同一时钟）",
	"cmp.edit":       "左侧设置修改的是：",
	"cmp.edita":      "运行 A",
	"cmp.editb":      "运行 B",
	"cmp.reset":      "B = A",
	"cmp.off":        "未开启。开启后，同一批请求会用另一组设置（策略、预算、模型、GPU、限制）再跑一次，画在同一时间轴上。",
	"cmp.same":       "暂无——在上方选择运行 B 并修改一项设置",
	"cmp.diff":       "B 与 A 不同之处：%s。",
	"cmp.errb":       "运行 B 无法模拟：%s",
	"cmp.caption":    "运行 A 与运行 B，B/A",
	"cmp.attain":     "SLO 达成率",
	"cmp.throughput": "吞吐（token/秒）",
	"cmp.preempt":    "抢占次数",
	"cmp.budget":     "预算 %d",
	"cmp.gpus":       "GPU 数",
	"cmp.editing":    "正在编辑运行 B：负载仍与 A 共享",

	"leg.limits":     "引擎限制（KV 缓存）",
	"ctl.ideal":      "理想引擎：无显存与序列数限制（课程所用）",
	"ctl.maxseqs":    "最大序列数（--max-seqs）",
	"ctl.gpumem":     "GPU 显存利用率",
	"ctl.block":      "KV 块大小（token）",
	"ctl.onfull":     "KV 缓存满时",
	"onfull.preempt": "抢占最新的序列，稍后重算",
	"onfull.wait":    "等待：预先为整个请求预留",
	"leg.kv":         "显存道：已用 KV 块（绿）与容量（黄线）；抢占（朱红）、拒绝（白）",
	"leg.xfer":       "KV 传输：从 prefill GPU 到 decode GPU 的连线，条长即传输时长",

	"nav.cmpc": "对比分块",
	"nav.cmpd": "对比分离式",
	"nav.mem":  "显存压力",

	"preset.compare-chunking.title": "对比：prefill 优先 vs 分块 512",
	"preset.compare-chunking.about": "同样的 1500 个请求、每秒 30 个，在同一时钟上跑两次：A 整段 prefill 提示，使 decode 停顿；B 把 prefill 切成每步 512 token 的预算。请看间隔道与 P99 ITL。",
	"preset.compare-disagg.title":   "对比：一块混合部署 GPU vs 2P+1D",
	"preset.compare-disagg.about":   "每块 GPU 负载相同：A 是一块混合部署 GPU、每秒 10 个请求；B 是两块 prefill 加一块 decode GPU、每秒 30 个请求（三块 GPU 的量），KV 经链路传输。",
	"preset.memory-pressure.title":  "KV 缓存被填满",
	"preset.memory-pressure.about":  "2048 token 的提示、512 token 的输出，引擎只能用 GPU 显存的 30%：缓存填满，最新的序列被抢占并重算，请求在等显存而不是等算力。",

	"canvas.routed": "→ %d 个请求",
	"canvas.kv":     "KV 缓存",
	"canvas.kvcap":  "%d 块 · 抢占 %d 次",

	"step.same":         "运行 %s 的同一时刻（%s）",
	"step.kv":           "KV 缓存：已用 %d / %d 块（%.0f%%），每块 %d 个 token。",
	"step.kv.share":     "#%d %d 个 token（%.1f%%）",
	"step.kv.holders":   "%d 个请求在此持有 KV；最大的：%s。",
	"step.held.kv":      "卡住请求的是显存而不是算力：队首的下一个请求在 KV 缓存中找不到空间，所以这一步的 prefill token 少于策略允许的数量。",
	"step.held.seqs":    "卡住请求的是序列数上限而不是算力：已有 %d 个序列占用槽位。",
	"step.preempted":    "为腾出空间而被抢占（其 KV 缓存被释放，稍后重算）：%s。",
	"step.rejected":     "被拒绝（永远放不下）：%s。",
	"step.xfer":         "#%d 的 KV 缓存 → decode %d：%.1f MB，经链路用时 %s 毫秒，于 %s 到达。",
	"step.router":       "路由器把每个完成 prefill 的请求发往未完成工作最少的 decode GPU。",
	"workload.trace":    "请求轨迹文件（已上传）",
	"ctl.lendist":       "长度",
	"lendist.fixed":     "固定",
	"lendist.uniform":   "均匀 ± 幅度",
	"lendist.lognormal": "对数正态，sigma = 幅度",
	"ctl.spread":        "幅度",
	"ctl.upload2":       "上传实验 JSON 或基准测试工具的结果（第二个文件为运行 B）、模型的 config.json，或请求轨迹（CSV/JSONL）",
	"note.trace":        "轨迹自带到达时间：没有可扫描的速率。",
	"up.badmodel":       "%s 不是本页可用的模型 config.json：%s",
	"up.model":          "%s：模型 %s 已加入模型列表并开始运行。",
	"up.badtrace":       "无法读取轨迹：%s",
	"up.trace":          "%s：%d 个请求作为负载回放（到达时间、提示、输出，与 servelab sim --trace 读法相同）。",
	"up.third":          "第三个文件 %s：它替换哪一次运行？A 是 %s，B 是 %s。",
	"up.replacea":       "替换 A",
	"up.replaceb":       "替换 B",
	"up.cancel":         "两个都保留",
	"up.differs":        "%s 表明它以 %s 运行，但本页模拟的是 %s。",
	"up.switch":         "切换为文件的设置",
	"up.keep":           "保留本页的设置",
	"ctl.splitgpus":     "给定 GPU 数的最佳 prefill:decode 划分",
	"split.go":          "搜索",
	"split.running":     "搜索中：在各自 SLO 下测一块 GPU 每个阶段的 goodput……",
	"split.none":        "%d 块 GPU 的任何划分在任何速率下都达不到 SLO。",
	"split.best":        "%d 块 GPU 的最佳划分：%dP+%dD，每块 GPU %.2f 请求/秒（合计 %.1f 请求/秒；一块 prefill GPU %.1f，一块 decode GPU %.1f 请求/秒）。",
	"split.use":         "采用 %dP+%dD",
	"split.err":         "划分搜索失败：%s",
}

func init() {
	for k, v := range runsZH {
		catalogueZH[k] = v
	}
}
