package labclient

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"servelab/sim/lab"
)

// measured is a small run labelled label, for the saving tests.
func measured(label string) *lab.Measured {
	c := lab.DefaultConfig()
	c.Label = label
	return &lab.Measured{Config: c, Summary: lab.Summary{Label: label, ShortConcurrency: 16, WorstGap: 0.1},
		Gaps: []lab.Gap{{TRelInject: -1, Gap: 0.01}, {TRelInject: 0.5, Gap: 0.1}}}
}

// A symlink at the path stays a symlink: its target gets the run.
func TestSaveMeasuredKeepsSymlink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.json", link); err != nil {
		t.Fatal(err)
	}
	if err := SaveMeasured(link, measured("via-link")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", st.Mode(), err)
	}
	f, err := os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m, err := lab.Read(f); err != nil || m.Summary.Label != "via-link" {
		t.Fatalf("the link's target does not hold the run: %v", err)
	}
}

// A FIFO at the path (a stand-in for /dev/null or a device) is written
// through, not replaced by a regular file.
func TestSaveMeasuredWritesThroughFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	if err := SaveMeasured(fifo, measured("through")); err != nil {
		t.Fatal(err)
	}
	b := <-got
	if m, err := lab.Read(bytes.NewReader(b)); err != nil || m.Summary.Label != "through" {
		t.Errorf("the reader of the FIFO did not get the run (%d bytes): %v", len(b), err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind in the directory: %v", ents)
	}
}

// Four saves to one path at once all succeed, and the file is one of them, whole.
func TestSaveMeasuredConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = SaveMeasured(path, measured(fmt.Sprint("writer-", i)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m, err := lab.Read(f); err != nil {
		t.Errorf("the file is not one whole run: %v", err)
	} else if len(m.Summary.Label) != len("writer-0") {
		t.Errorf("label %q", m.Summary.Label)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind in the directory: %v", ents)
	}
}

// CheckWritable passes what SaveMeasured writes through (a FIFO, as
// /dev/null) and a symlink into a writable directory.
func TestCheckWritableFollowsPath(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := CheckWritable(fifo); err != nil {
		t.Errorf("a FIFO: %v", err)
	}
	if err := CheckWritable(os.DevNull); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	if err := CheckWritable(dir); err == nil {
		t.Error("a directory passed")
	}
}
