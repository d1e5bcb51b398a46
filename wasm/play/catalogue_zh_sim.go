//go:build js && wasm

package play

// The Chinese of catalogue_en_sim.go's texts; merged into catalogueZH.
var simZH = map[string]string{
	"sim.bench.chunks":             "每个数据块平均带 %.2f 个 token，所以块间隔不等于一个 token 间隔：itl 按块计（%s）；itl_token 把每个间隔分摊到第一个 token 之后的各个 token 上，在该请求的各块之间平均分配（文件只记每个请求的 token 总数，不记每块的数）",
	"sim.bench.merged":             "文件自述的数字取自 %s",
	"sim.bench.aiperf.load":        "要求的负载（速率或并发）和工具自己算的百分位数：它们在本文件旁边的 profile_export_aiperf.json 里",
	"sim.bench.aiperf.itl":         "AIPerf 的 inter_token_latency 是（e2e − TTFT）/（输出 − 1）：即 servelab 的 tpot",
	"sim.bench.aiperf.chunks":      "AIPerf 的 inter_chunk_latency",
	"sim.bench.aiperf.counted":     "服务器没有返回 usage 的地方，输出 token 数按内容块计（AIPerf 用它的分词器计数）",
	"sim.bench.aiperf.starts":      "开始时间：缺少 metadata.request_start_ns",
	"sim.bench.genaiperf.counted":  "输出 token 数按内容响应计（GenAI-Perf 用它的分词器计数）：一个响应带多个 token 时，tpot 和 itl_token 会按这个倍数偏高",
	"sim.bench.genaiperf.prompt":   "提示 token 数：GenAI-Perf 自己给提示分词，不把数量写在这里（旁边的 profile_export_genai_perf.json 有它们的平均值）",
	"sim.bench.genaiperf.itl":      "GenAI-Perf 的 inter_token_latency 是（e2e − TTFT）/（输出 − 1）：即 servelab 的 tpot",
	"sim.bench.genaiperf.chunks":   "内容响应之间的间隔",
	"sim.bench.guidellm.sample":    "文件在 %[2]d 个成功请求中只保留了 %[1]d 个样本；由样本算出的数字可能与文件自述的不同",
	"sim.bench.guidellm.itl":       "itl_token 是 GuideLLM 每个请求的平均间隔，第一个 token 之后每个 token 计一次，和它自己的 inter_token_latency_ms 分布的算法一样",
	"sim.bench.guidellm.times":     "itl（按块）和每个 token 的时刻：GuideLLM 只保留每个请求第一个和最后一个 token 的时刻，所以时间线上没有它的间隔",
	"sim.bench.llmperf.times":      "itl（按块）、每个 token 的时刻和开始时间：llmperf 都不保留，所以时间线上没有它的间隔",
	"sim.bench.llmperf.itl":        "llmperf 的 inter_token_latency_s：它是（TTFT + 所有间隔）/ 输出 token 数，含 TTFT，所以不作比较；tpot 和 itl_token 由 e2e − TTFT 算出",
	"sim.bench.llmperf.load":       "要求的负载和工具自己算的百分位数：它们在本文件旁边的 *_summary.json 里",
	"sim.bench.llmperf.tokens":     "输出 token 数是 llmperf 对文本重新分词的计数（Llama 分词器），不是服务器给的",
	"sim.bench.llmperf.aggregate":  "逐请求数据：这是汇总文件；请求在旁边的 *_individual_responses.json 里",
	"sim.bench.llmperf.itlsummary": "llmperf 的 inter_token_latency_s 含 TTFT，不作比较",
	"sim.bench.nv.aggregate":       "逐请求数据：这是汇总文件；请求在旁边的 profile_export.json(l) 里",
	"sim.bench.sglang.itl":         "SGLang 的原生后端把一个块的间隔分摊到它的各个 token（itl 已经按 token 计）；它的 OpenAI 后端每块只记一个间隔",
	"sim.bench.vllm.errors":        "errors 另列了 %d 个失败，不在保留的 %d 个请求之内",
	"sim.bench.vllm.e2e":           "端到端延迟取 TTFT 加上各块间隔（文件没有记录延迟）",
	"sim.bench.vllm.starts":        "开始时间：这个版本不写开始时间，所以块间隔无法放上时间线",
	"sim.bench.vllm.chunks":        "工具记录的 itls",

	"sim.cal.fig.quiet":      "安静期 ITL p50",
	"sim.cal.fig.ttft":       "长提示 TTFT",
	"sim.cal.fig.worst":      "最大间隔",
	"sim.cal.fig.longdecode": "长请求 decode 期间的 ITL p50",
	"sim.cal.fig.prefill":    "长提示 prefill 期间的 ITL p50",
	"sim.cal.fig.decode":     "ITL p50（%d 个序列、上下文 %d 的 decode）",
	"sim.cal.fig.prompt":     "TTFT p50（%d token 的 prefill）",
	"sim.cal.why.nofigure":   "这些文件里没有哪个数字依赖它",
	"sim.cal.why.nopin":      "这些文件定不住它",
	"sim.cal.why.pin":        "这些文件只能把它定到 ±%.0f%%",
	"sim.cal.why.partner":    "%s；它和 %s 此消彼长（再测一个不同的批大小、上下文或提示长度才能把两者分开）",
	"sim.cal.kept":           "保持基准值：%s",
	"sim.cal.source":         "servelab 校准自 %s（±%.1f%%）",
	"sim.cal.gpunote":        "在 %s 上校准：拟合了 %s；其余取自配置档 %s",
	"cal.notid.item":         "%s：%s",

	"ptpl.fitted": "由 `%[1]s` 按 %[3]s 上的 %[2]s 个公开数据点拟合（cmd/servelab/testdata/fidelity）（±%[4]s）",
	"ptpl.gpufit": "按 %[2]s 上的 %[1]s 个公开数据点拟合",
	"ptpl.mean":   "这块 GPU 没有公开数据点：取 %s（%s）和 %s（%s）上拟合值的平均",
	"ptpl.nofit":  "%s 在配置档 %s 中没有自己的常数：使用配置档的通用值",

	"ptext.lecture.effc":      "讲义：重现它的 512 token prefill 用时 14.07 毫秒和 7.23 倍的减速（Llama-3.1-8B，H100 SXM）",
	"ptext.lecture.effm":      "讲义：重现它 32 个序列、上下文 700 时约 7.7 毫秒的 decode 步（Llama-3.1-8B，H100 SXM）",
	"ptext.lecture.ovh":       "讲义：每步 1 毫秒，课程的假设",
	"ptext.lecture.allreduce": "servelab 的假设：环形 all-reduce 能达到 NVLink 带宽的约 70%",
	"ptext.lecture.unfitted":  "讲义的常数在每块 GPU 上都一样；它们是为重现讲义而选的，不是针对某块 GPU 拟合的。",
	"ptext.vllm.effkv":        "按长上下文 decode 的数据点拟合（Sarathi-Serve Mistral-7B 批 32 × 4096，TensorRT-LLM 7B 吞吐）：在 A100-80GB 上自由拟合会顶到 1.0；没有内核能比这更快地读 HBM，所以定在 0.9；FlashDecoding 一类的内核读长 KV 几乎能到峰值",
	"ptext.vllm.ovh":          "假设：开了 CUDA graph 的 vLLM 每步花 1–2 毫秒 CPU（调度、准备输入、处理输出）；公开数据点只能把它定到 ±36%（fidelity --fit）",
	"ptext.vllm.seqcost":      "假设：每个序列每步约 5 µs CPU（采样记账、反分词）；公开数据点定不住它（`fidelity --fit` 给出 ±212%；去掉它，vLLM CI 的吞吐数据点只变约 1%）",
	"ptext.vllm.reqcost":      "假设：每接纳一个提示，引擎花约 0.3 毫秒 CPU（把 token 分到块里、调度、准备输入）；公开数据点定不住它（±116%）；前端的 HTTP 和分词算在 req_latency 里",
	"ptext.vllm.allreduce":    "servelab 的假设（和 lecture 配置档一样）：环形 all-reduce 能达到互连带宽的约 70%；与 TensorRT-LLM 在 TP4/TP8、2048 token 时的 TTFT 相符（误差在 5% 以内）",
	"ptext.vllm.collective":   "每次 all-reduce 25 µs，每层两次（NCCL/自定义 all-reduce 的启动和同步）：按 vLLM CI 的 TP4 70B 和 TP2 Mixtral 延迟手工选定（没有它，TP4 的 ITL 会低 15–30%）；`servelab fidelity --fit --free collective_latency` 在这个值附近只能把它定到 H100-SXM 上 ±40%、H200 上 ±24%",
	"ptext.vllm.reqlat":       "来自第 12 号议题对公开服务基准的拟合（与这些数据点分开）：没有每请求开销时，轻负载的 TTFT 低 25–40 毫秒；取 20 毫秒（低端，再减去本配置档的 prefill 已经多出的几毫秒）作为 HTTP、分词、反分词和进程间转发的时间，在引擎的步之外。共用的数据点（离线引擎）定不住它",
	"ptext.vllm.h200":         "eff_mem 按 H200 上的 4 个公开数据点拟合；算力部分取自 H100-SXM（同一颗 GH100 芯片）",
	"ptext.vllm.h200effc":     "H100-SXM 的拟合值：H200 是同一颗 GH100 芯片，HBM 更大更快，而它的公开数据点全是 decode 受限的",
	"ptext.vllm.h200p":        "H100-SXM 的拟合值（同一颗 GH100 芯片）",
	"ptext.vllm.unfitted":     "cmd/servelab/testdata/fidelity 里没有这块 GPU 的公开数据点：使用配置档的通用值（A100-80GB 和 H100-SXM 拟合值的平均，以及假设）",

	"pconst.eff_compute":        "GEMM 达到的峰值 FLOP/s 比例",
	"pconst.eff_mem":            "读权重时达到的峰值带宽比例",
	"pconst.eff_kv":             "注意力读 KV cache 时达到的峰值带宽比例",
	"pconst.roofline_p":         "平滑 roofline (c^p + m^p)^(1/p) 的 p；0 表示直接取最大值",
	"pconst.overhead":           "每步的固定时间（调度、内核启动）",
	"pconst.seq_cost":           "一步里每个序列的 CPU 时间（采样、反分词、记账）",
	"pconst.req_cost":           "每个提示开始 prefill 时的 CPU 时间（分词、接纳）",
	"pconst.req_latency":        "请求在引擎之外花的时间（HTTP、分词、反分词）：计入 TTFT 和 E2E，不占用任何一步",
	"pconst.allreduce_eff":      "all-reduce 达到的互连带宽比例（TP > 1）",
	"pconst.collective_latency": "每次 all-reduce 的固定时间，每层两次（TP > 1）",
}

func init() {
	for k, v := range simZH {
		catalogueZH[k] = v
	}
}
