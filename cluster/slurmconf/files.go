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
	// (ParseSacctmgr); "" for the sacctmgr.script beside Conf, when there
	// is one (Slurm keeps the association tree in slurmdbd, which xce
	// does not read; the Slurm simulator's tools keep it as this script).
	Sacctmgr string
}

// beside returns the file name beside conf, if it exists ("" if not).
func beside(conf, name string) (string, error) {
	p := filepath.Join(filepath.Dir(conf), name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return "", nil
}

// Import reads the files and returns the xce configuration Scenario
// writes, its warnings, and the files it read: f with Gres and Sacctmgr
// set to the files found beside slurm.conf when f left them out. An I/O
// error names the file; a syntax error is a *slurm.Error.
func Import(f Files) (yaml []byte, warnings []string, read Files, err error) {
	conf, err := parseFile(f.Conf, Parse)
	if err != nil {
		return nil, nil, f, err
	}
	var o Options
	for _, x := range []struct {
		path *string
		name string
	}{{&f.Gres, "gres.conf"}, {&f.Sacctmgr, "sacctmgr.script"}} {
		if *x.path == "" {
			if *x.path, err = beside(f.Conf, x.name); err != nil {
				return nil, nil, f, err
			}
		}
	}
	if f.Gres != "" {
		if o.Gres, err = parseFile(f.Gres, ParseGres); err != nil {
			return nil, nil, f, err
		}
	}
	if f.Sacctmgr != "" {
		if o.Assoc, err = parseFile(f.Sacctmgr, ParseSacctmgr); err != nil {
			return nil, nil, f, err
		}
	}
	yaml, warnings, err = Scenario(conf, o)
	return yaml, warnings, f, err
}

// ConfigText returns the configuration text of the file at path, whose
// bytes are data: data itself for an xce (YAML) configuration, or the
// configuration Import writes for a slurm.conf (Looks), with its
// warnings, the first ones ("note: …") naming the files read beside it. It is how `--cluster` and `xce serve --config` take either.
func ConfigText(path string, data []byte) ([]byte, []string, error) {
	if !Looks(data) {
		return data, nil, nil
	}
	yaml, warnings, read, err := Import(Files{Conf: path})
	var notes []string
	for _, f := range []string{read.Gres, read.Sacctmgr} {
		if f != "" {
			notes = append(notes, "note: "+path+": read "+f+" beside it")
		}
	}
	return yaml, append(notes, warnings...), err
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
