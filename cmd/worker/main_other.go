//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main explains itself natively: the worker runs only on Workers (or
// workerd), built by `make worker`.
func main() {
	fmt.Fprintln(os.Stderr, "cmd/worker runs on Cloudflare Workers: build it with `make worker` and run it with workerd or wrangler (see README.md)")
	os.Exit(2)
}
