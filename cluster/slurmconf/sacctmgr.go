package slurmconf

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/slurm"
)

// Assoc is what a sacctmgr(1) script says about the association tree and
// the QOS: the accounts with their parents, shares and users, and the
// QOS priorities.
type Assoc struct {
	File     string                 // the script's name, for messages
	Accounts []cluster.SlurmAccount // in the order added
	QOS      []cluster.SlurmQOS     // normal first, then in the order added
	// Unused are the commands xce does not use (list and show aside).
	Unused []Unused
}

// ParseSacctmgr reads a script of sacctmgr(1) commands, one a line ("#"
// comments), as `sacctmgr -i < script` would run them, for what the
// multifactor picker needs:
//
//	add account NAME[,NAME…] [Fairshare=N] [Parent=P]   (or Name=NAME)
//	add user NAME[,NAME…] [Account=A[,A…]] [DefaultAccount=A] [Fairshare=N]
//	add qos NAME [Priority=N]
//	modify qos [where] [Name=]NAME set Priority=N
//
// (create is add, update is modify; keywords are case-insensitive). A
// user's associations are one per account of Account=, else its
// DefaultAccount. Other commands, and parameters xce does not use, are
// listed in Unused; list and show are skipped. An account a user names
// that no add account created is an error.
func ParseSacctmgr(r io.Reader, file string) (*Assoc, error) {
	lr := slurm.NewLines(r, file)
	a := &Assoc{File: file, QOS: []cluster.SlurmQOS{{Name: "normal"}}}
	acct := map[string]int{}
	for {
		b, err := lr.Next()
		if err == io.EOF {
			return a, nil
		}
		if err != nil {
			return nil, err
		}
		n := lr.Line()
		text := string(b)
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		tok := strings.Fields(text)
		if len(tok) == 0 {
			continue
		}
		verb := strings.ToLower(tok[0])
		obj := ""
		if len(tok) > 1 {
			obj = strings.ToLower(tok[1])
			if obj != "qos" {
				obj = strings.TrimSuffix(obj, "s") // accounts, users
			}
		}
		names, params := splitArgs(tok[min(2, len(tok)):])
		unused := func(key string) { a.Unused = append(a.Unused, Unused{file, n, key, text}) }
		switch {
		case verb == "list" || verb == "show":
		case (verb == "add" || verb == "create") && obj == "account":
			for _, name := range names {
				if err := slurm.CheckName("account", name); err != nil {
					return nil, slurm.Errorf(file, n, "%w", err)
				}
				ac := cluster.SlurmAccount{Name: name, Shares: 1}
				if v, ok := params["parent"]; ok && v != "root" {
					if _, known := acct[v]; !known {
						return nil, slurm.Errorf(file, n, "parent account %s was not added before", slurm.Quote(v))
					}
					ac.Parent = v
				}
				if v, ok := params["fairshare"]; ok {
					s, err := shares(v)
					if err != nil {
						return nil, slurm.Errorf(file, n, "Fairshare: %w", err)
					}
					ac.Shares = s
				}
				if i, dup := acct[name]; dup {
					a.Accounts[i] = ac
				} else {
					acct[name] = len(a.Accounts)
					a.Accounts = append(a.Accounts, ac)
				}
			}
			warnParams(params, unused, "name", "fairshare", "parent", "description", "organization")
		case (verb == "add" || verb == "create") && obj == "user":
			accounts := params["account"]
			if accounts == "" {
				accounts = params["defaultaccount"]
			}
			sh := int64(1)
			if v, ok := params["fairshare"]; ok {
				s, err := shares(v)
				if err != nil {
					return nil, slurm.Errorf(file, n, "Fairshare: %w", err)
				}
				sh = s
			}
			for _, name := range names {
				for _, ac := range strings.Split(accounts, ",") {
					i, ok := acct[ac]
					if !ok {
						return nil, slurm.Errorf(file, n, "user %s: account %s was not added before", slurm.Quote(name), slurm.Quote(ac))
					}
					a.Accounts[i].Users = append(a.Accounts[i].Users, cluster.UserShare{User: name, Shares: int(sh)})
				}
			}
			warnParams(params, unused, "name", "account", "defaultaccount", "fairshare", "maxsubmitjobs", "adminlevel", "defaultwckey")
		case (verb == "add" || verb == "create" || verb == "modify" || verb == "update") && obj == "qos":
			prio := int64(-1)
			if v, ok := params["priority"]; ok {
				p, err := strconv.ParseInt(v, 10, 64)
				if err != nil || p < 0 || p > 1<<32-1 {
					return nil, slurm.Errorf(file, n, "Priority=%s: want an integer from 0 to 4294967295", slurm.Quote(v))
				}
				prio = p
			}
			for _, name := range names {
				a.setQOS(name, prio, verb == "add" || verb == "create")
			}
			warnParams(params, unused, "name", "priority")
		default:
			unused(tok[0] + " " + obj)
		}
	}
}

// setQOS sets QOS name's priority (prio < 0: leaves it, 0 for a new one).
func (a *Assoc) setQOS(name string, prio int64, add bool) {
	for i := range a.QOS {
		if a.QOS[i].Name == name {
			if prio >= 0 {
				a.QOS[i].Priority = prio
			}
			return
		}
	}
	a.QOS = append(a.QOS, cluster.SlurmQOS{Name: name, Priority: max(prio, 0)})
}

// splitArgs splits sacctmgr arguments into names (bare words but where
// and set, and Name= values, comma lists split) and lower-case key =
// value parameters.
func splitArgs(args []string) ([]string, map[string]string) {
	var names []string
	params := map[string]string{}
	for _, t := range args {
		k, v, ok := strings.Cut(t, "=")
		switch {
		case !ok && (strings.EqualFold(t, "where") || strings.EqualFold(t, "set")):
		case !ok:
			names = append(names, strings.Split(t, ",")...)
		case strings.EqualFold(k, "name") || strings.EqualFold(k, "names"):
			names = append(names, strings.Split(v, ",")...)
		default:
			params[strings.ToLower(k)] = v
		}
	}
	return names, params
}

// warnParams reports the parameters not in known, in name order.
func warnParams(params map[string]string, unused func(string), known ...string) {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if !containsFold(known, k) {
			unused(k)
		}
	}
}

// shares reads a Fairshare value: a non-negative integer ("parent" is
// not supported).
func shares(v string) (int64, error) {
	s, err := strconv.ParseInt(v, 10, 64)
	if err != nil || s < 0 || s > 1_000_000_000 {
		return 0, fmt.Errorf("%s: want an integer from 0 to 10^9 (parent is not supported)", slurm.Quote(v))
	}
	return s, nil
}
