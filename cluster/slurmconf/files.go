package slurmconf

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// configuration Import writes for a slurm.conf (LooksNamed), with its
// warnings, the first ones ("note: …") naming the files read beside it. It is how `--cluster` and `xce serve --config` take either.
func ConfigText(path string, data []byte) ([]byte, []string, error) {
	if !LooksNamed(path, data) {
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

// lookBytes bounds how much of a file Looks scans for slurm.conf lines.
const lookBytes = 1 << 20

// lineKeys are the keys that start a line of its own in slurm.conf: a
// node, a partition, the other line kinds Parse knows, and Include.
var lineKeys = []string{"nodename", "partitionname", "frontendname", "nodeset", "downnodes", "switchname", "include"}

// Looks reports whether data reads as slurm.conf rather than YAML, by its
// content: its first line that is not blank or a comment is Key=Value,
// the key a word ("ClusterName=micro", "NodeName=n[1-4] CPUs=12"); or a
// line of its first MiB that is not blank or a comment starts with a key
// slurm.conf(5) has and xce knows (NodeName, PartitionName,
// SlurmctldHost, ClusterName, SchedulerType, ...; any case) followed by
// '=' (blanks before it allowed: Parse then says what is wrong with the
// line), or is a NodeName, PartitionName or Include line without its '='
// ("NodeName n1 CPUs=4", "Include nodes.conf"). A YAML file's lines are
// "key:", list items and flow collections, never these.
//
// A UTF-8 byte order mark before the first line is skipped, and so are
// the blank and comment lines before the first other one, however many:
// the first MiB scanned is the first MiB after them.
func Looks(data []byte) bool {
	data = bytes.TrimPrefix(data, bom)
	data = data[leadingComments(data):]
	data = data[:min(len(data), lookBytes)]
	first := true
	for len(data) > 0 {
		var text []byte
		text, data, _ = bytes.Cut(data, []byte("\n"))
		s := bytes.TrimSpace(text)
		if len(s) == 0 || s[0] == '#' {
			continue
		}
		word, rest := leadingWord(s)
		if first && len(word) > 0 && len(rest) > 0 && rest[0] == '=' && (word[0] < '0' || word[0] > '9') {
			return true
		}
		first = false
		if len(word) > 0 && slurmKey(string(word), rest) {
			return true
		}
	}
	return false
}

// bom is the UTF-8 byte order mark some editors write first.
var bom = []byte("\xef\xbb\xbf")

// leadingComments returns the length of data's leading blank and comment
// lines.
func leadingComments(data []byte) int {
	n := 0
	for n < len(data) {
		line, _, _ := bytes.Cut(data[n:], []byte("\n"))
		if s := bytes.TrimSpace(line); len(s) > 0 && s[0] != '#' {
			break
		}
		n += len(line) + 1
	}
	return min(n, len(data))
}

// leadingWord splits s after its leading word (letters, digits, '_').
func leadingWord(s []byte) (word, rest []byte) {
	i := 0
	for i < len(s) && (s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9' || s[i] == '_') {
		i++
	}
	return s[:i], s[i:]
}

// slurmKey reports whether a line that starts with word, followed by
// rest, is a slurm.conf line (Looks).
func slurmKey(word string, rest []byte) bool {
	key := strings.ToLower(word)
	after := bytes.TrimLeft(rest, " \t")
	switch {
	case len(after) > 0 && after[0] == '=':
		return slices.Contains(lineKeys, key) || slices.Contains(usedKeys, key) || slices.Contains(daemonKeys, key)
	case len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t'):
		return slices.Contains(lineKeys, key) && len(after) > 0 && after[0] != ':' && after[0] != '#'
	}
	return false
}

// LooksNamed reports whether the file name, whose bytes are data, is read
// as slurm.conf: when its content says so (Looks), or when its name is
// slurm.conf or ends in ".conf" and its first line that is not blank or a
// comment does not start as YAML does ("key:", "- ", "---", '{', '['):
// the errors of a malformed slurm.conf then name its lines as slurm.conf
// errors, not as YAML's.
func LooksNamed(name string, data []byte) bool {
	if Looks(data) {
		return true
	}
	base := filepath.Base(name)
	if base != "slurm.conf" && !strings.HasSuffix(base, ".conf") {
		return false
	}
	data = bytes.TrimPrefix(data, bom)
	for len(data) > 0 {
		var text []byte
		text, data, _ = bytes.Cut(data, []byte("\n"))
		s := bytes.TrimSpace(text)
		if len(s) == 0 || s[0] == '#' {
			continue
		}
		return !yamlStart(s)
	}
	return false // empty: YAML's error ("no hosts") names it as well
}

// yamlStart reports whether a line that is not blank or a comment starts
// as YAML's lines do: a key and ':' (plain or quoted), a list item, a
// document marker or directive, a flow collection, an anchor, tag or
// alias.
func yamlStart(s []byte) bool {
	switch s[0] {
	case '-', '{', '[', '%', '&', '!', '*', '?', '|', '>':
		return true
	case '"', '\'':
		end := bytes.IndexByte(s[1:], s[0])
		return end >= 0 && bytes.HasPrefix(bytes.TrimLeft(s[end+2:], " \t"), []byte(":"))
	}
	word, rest := leadingWord(s)
	for len(rest) > 0 && (rest[0] == '-' || rest[0] == '.' || rest[0] == '/') { // keys like max-size, a.b
		var more []byte
		more, rest = leadingWord(rest[1:])
		word = append(word[:len(word):len(word)], more...)
	}
	rest = bytes.TrimLeft(rest, " \t")
	return len(word) > 0 && len(rest) > 0 && rest[0] == ':' && (len(rest) == 1 || rest[1] == ' ' || rest[1] == '\t')
}
