//go:build !js

package play

// 模拟器运行之前页面上的文字（bootEN 的中文）。Merged into catalogueZH.
var bootZH = map[string]string{
	"boot.loading":  "正在加载模拟器… ",
	"boot.starting": "正在启动模拟器… ",
	"boot.noexec":   "缺少 wasm_exec.js：请用 `make wasm` 构建。",
	"boot.nowasm":   "此浏览器不支持 WebAssembly。",
	"boot.stopped":  "模拟器已停止。重新加载页面即可再次启动。",
	"boot.failed":   "无法启动模拟器（app.wasm）：%s。请用 `make wasm` 构建。",
	"boot.waiting":  "模拟器加载完成后，设置、播放和侧栏才能使用；本章的文字和表格已经在这里。",
	"boot.mb":       "%.1f / %.1f MB",
	"ch.static":     "本章设置下的表格，随页面一起加载；模拟器运行后，滑块才能改变它。",
}

func init() {
	for k, v := range bootZH {
		catalogueZH[k] = v
	}
}
