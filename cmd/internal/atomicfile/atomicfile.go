// Package atomicfile is the one way servelab's commands save a file: the
// reader of the path sees the old file or the new one, whole, never a part.
//
// Write puts the data in a temporary file of its own (a unique name in the
// target's directory, so concurrent saves never share it), syncs it and
// renames it over the target. The path is followed first: a symlink's
// target is replaced and the link kept. A path that exists and is not a
// regular file (a FIFO, /dev/null, /dev/stdout, a terminal) is written
// through, opened as it is, never replaced: that is what the user named,
// as a shell's `>` does, and renaming over it would swap a device node or
// a pipe for a regular file (as root, /dev/full itself). A directory is
// refused.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxLinks bounds the symlinks followed, as the kernel's ELOOP does.
const maxLinks = 40

// WriteFile saves data at path (see Write); a new file gets perm.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write saves what write writes at path and returns the first error of
// write, the file system or the rename. A regular file (or a new one) is
// replaced atomically: write's output goes to a unique temporary file in
// the target's directory, which is synced and renamed over the target,
// and removed when anything fails, so the target is untouched then. A new
// file gets perm; a replaced one keeps its own permission bits. A symlink
// is followed and its target replaced. Anything else that exists (a FIFO,
// a device) is opened and written through; a directory is refused.
func Write(path string, perm os.FileMode, write func(io.Writer) error) error {
	target, st, err := Resolve(path)
	if err != nil {
		return err
	}
	switch {
	case st == nil:
	case st.IsDir():
		return fmt.Errorf("%s is a directory: name a file", path)
	case !st.Mode().IsRegular():
		return through(target, write)
	default:
		perm = st.Mode().Perm()
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := write(f); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil { // make the rename itself durable (best effort)
		d.Sync()
		d.Close()
	}
	return nil
}

// through writes to an existing file that is not a regular one, in place.
func through(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Resolve follows path's symlinks and returns the path Write would write
// with its status, or a nil status when it does not exist (a dangling
// link names the file to create).
func Resolve(path string) (string, os.FileInfo, error) {
	for range maxLinks {
		st, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) {
			return path, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			return path, st, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", nil, fmt.Errorf("%s: too many levels of symbolic links", path)
}
