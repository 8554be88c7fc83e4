package slurmconf

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Files names the files of a Slurm cluster's configuration.
type Files struct {
	// Conf is slurm.conf.
	Conf string
	// Gres is gres.conf; "" for the gres.conf beside Conf, where Slurm
	// reads it, when there is one.
	Gres string
	// Sacctmgr is a script of sacctmgr commands giving accounts and QOS
	// (ParseSacctmgr); "" for none.
	Sacctmgr string
}

// Import reads the files and returns the xce configuration Scenario
// writes, its warnings, and the gres.conf it read ("" for none). An I/O
// error names the file; a syntax error is a *slurm.Error.
func Import(f Files) (yaml []byte, warnings []string, gres string, err error) {
	conf, err := parseFile(f.Conf, Parse)
	if err != nil {
		return nil, nil, "", err
	}
	var o Options
	gres = f.Gres
	if gres == "" {
		beside := filepath.Join(filepath.Dir(f.Conf), "gres.conf")
		if _, err := os.Stat(beside); err == nil {
			gres = beside
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, "", err
		}
	}
	if gres != "" {
		if o.Gres, err = parseFile(gres, ParseGres); err != nil {
			return nil, nil, "", err
		}
	}
	if f.Sacctmgr != "" {
		if o.Assoc, err = parseFile(f.Sacctmgr, ParseSacctmgr); err != nil {
			return nil, nil, "", err
		}
	}
	yaml, warnings, err = Scenario(conf, o)
	return yaml, warnings, gres, err
}

func parseFile[T any](path string, parse func(io.Reader, string) (T, error)) (T, error) {
	file, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer file.Close()
	return parse(file, path)
}

// Looks reports whether data reads as slurm.conf rather than YAML: its
// first line that is not blank or a comment is Key=Value, the key a
// word ("ClusterName=micro", "NodeName=n[1-4] CPUs=12"). A YAML scenario
// starts with "key:" or a list.
func Looks(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		s := bytes.TrimSpace(sc.Bytes())
		if len(s) == 0 || s[0] == '#' {
			continue
		}
		i := 0
		for i < len(s) && (s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9' || s[i] == '_') {
			i++
		}
		return i > 0 && i < len(s) && s[i] == '=' && (s[0] < '0' || s[0] > '9')
	}
	return false
}
