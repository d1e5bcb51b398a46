package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestWriteReplacesRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("holds %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600 kept", st.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

func TestWriteFailureLeavesTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("holds %q after a failed write", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// A symlink (relative, through a second link, or dangling) is kept; its
// target gets the data.
func TestWriteKeepsSymlinks(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	target := filepath.Join(sub, "target.json")
	os.WriteFile(target, []byte("old"), 0o644)
	os.Symlink("sub/target.json", filepath.Join(dir, "a"))
	os.Symlink("a", filepath.Join(dir, "b"))
	os.Symlink("sub/new.json", filepath.Join(dir, "dangling"))
	for _, c := range []struct{ link, target string }{{"a", target}, {"b", target}, {"dangling", filepath.Join(sub, "new.json")}} {
		link := filepath.Join(dir, c.link)
		if err := WriteFile(link, []byte(c.link), 0o644); err != nil {
			t.Fatalf("%s: %v", c.link, err)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced (%v)", c.link, err)
		}
		if b, _ := os.ReadFile(c.target); string(b) != c.link {
			t.Errorf("%s: its target holds %q", c.link, b)
		}
	}
	os.Symlink("loop", filepath.Join(dir, "loop"))
	if err := WriteFile(filepath.Join(dir, "loop"), nil, 0o644); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("a link to itself: %v", err)
	}
}

// A FIFO, as /dev/null or a device would be, is written through and stays.
func TestWriteThroughFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	link := filepath.Join(dir, "null")
	os.Symlink(fifo, link) // as /dev/stdout is a link to a pipe
	for _, p := range []string{fifo, link} {
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- string(b)
		}()
		if err := WriteFile(p, []byte("through"), 0o644); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != "through" {
			t.Errorf("%s: the reader got %q", p, s)
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("the FIFO was replaced (%v)", err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
	if err := WriteFile(dir, nil, 0o644); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory: %v", err)
	}
}

// Four writers to one path all succeed; the file is one of them, whole.
func TestWriteConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payload := map[string]any{"writer": i, "filler": strings.Repeat(fmt.Sprint(i), 1<<20)}
			errs[i] = Write(path, 0o644, func(w io.Writer) error { return json.NewEncoder(w).Encode(payload) })
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Writer int
		Filler string
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("not one whole JSON: %v", err)
	}
	if got.Filler != strings.Repeat(fmt.Sprint(got.Writer), 1<<20) {
		t.Errorf("writer %d's file is mixed", got.Writer)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}
