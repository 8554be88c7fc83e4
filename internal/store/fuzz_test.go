package store

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeRecord: decoding any stored bytes gives an event or an error,
// never a panic. With reframe the bytes get a valid checksum first, so
// the fuzzer reaches the JSON behind it. A record that decodes has the
// index it is stored at, and one of a known type encodes back to a record
// that decodes and encodes to the same bytes (not always to a DeepEqual
// event: an empty list decodes as empty and encodes as absent).
func FuzzDecodeRecord(f *testing.F) {
	for i, e := range indexed(1, everyType()) {
		rec, err := encodeRecord(&e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint64(i+1), rec, false)
		f.Add(uint64(i+1), rec[4:], true)
		f.Add(uint64(i+2), rec, false)
	}
	f.Add(uint64(2), []byte(`{"index":2,"type":"job.teleported","skip_ok":true}`), true)
	f.Add(uint64(2), []byte(`{"index":2,"type":"job.teleported"}`), true)
	f.Add(uint64(1), []byte{}, false)
	f.Add(uint64(1), []byte{0, 0, 0, 0}, false)
	f.Fuzz(func(t *testing.T, index uint64, v []byte, reframe bool) {
		if reframe {
			v = frame(v)
		}
		e, err := decodeRecord(index, v)
		if err != nil {
			if _, crcErr := unframe(v); crcErr != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("bad checksum gave %v, want ErrCorrupt", err)
			}
			return
		}
		if e.Index != index {
			t.Fatalf("decoded index %d from a record at %d", e.Index, index)
		}
		if e.Check() != nil {
			if !e.SkipOK {
				t.Fatalf("decoded an unknown event that may not be skipped: %+v", e)
			}
			return
		}
		rec, err := encodeRecord(&e)
		if err != nil {
			t.Fatalf("decoded %+v, which does not encode: %v", e, err)
		}
		again, err := decodeRecord(index, rec)
		if err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", e, err)
		}
		rec2, err := encodeRecord(&again)
		if err != nil || !bytes.Equal(rec2, rec) {
			t.Fatalf("record %q decodes and encodes to %q, %v", rec, rec2, err)
		}
	})
}
