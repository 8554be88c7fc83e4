// Package tracefile opens workload trace files, plain or gzip-compressed
// (recognized by the gzip magic bytes, whatever the file's extension), for
// the readers of the trace formats (SWF, sacct -P, the Slurm simulator's
// events).
package tracefile

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// Open opens the file at path and returns its text, decompressed when it
// is gzipped, read through a buffer of size bytes (bufio's default when
// size ≤ 0): a *bufio.Reader for a plain file. Errors name the file by
// path. The caller must Close the returned Closer, which closes the
// decompressor (if any) and the file.
func Open(path string, size int) (io.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if size <= 0 {
		size = 4096
	}
	br := bufio.NewReaderSize(f, size)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		return zr, gzipCloser{zr, f}, nil
	}
	return br, f, nil
}

// gzipCloser closes a gzip reader and the file under it.
type gzipCloser struct {
	zr *gzip.Reader
	f  *os.File
}

func (c gzipCloser) Close() error {
	err := c.zr.Close()
	if ferr := c.f.Close(); err == nil {
		err = ferr
	}
	return err
}
