package slurmconf

import (
	"reflect"
	"strings"
	"testing"

	"github.com/xce-sched/xce/cluster"
)

// TestSacctmgr: accounts (a parent added before its child), users in
// their accounts, QOS added and modified, and what is not used.
func TestSacctmgr(t *testing.T) {
	a, err := ParseSacctmgr(strings.NewReader(`# the trace's forms
modify QOS set normal Priority=0
add QOS Name=supporters Priority=100
add cluster Name=micro Fairshare=1
add account name=account0 Fairshare=100
create accounts a1,a2 parent=account0
add user name=admin DefaultAccount=account0 MaxSubmitJobs=1000 AdminLevel=Administrator
add user u1,u2 Account=a1,a2 Fairshare=3
modify qos where name=supporters set priority=50
list associations format=Account,User
`), "s.script")
	if err != nil {
		t.Fatal(err)
	}
	wantAcct := []cluster.SlurmAccount{
		{Name: "account0", Shares: 100, Users: []cluster.UserShare{{User: "admin", Shares: 1}}},
		{Name: "a1", Parent: "account0", Shares: 1, Users: []cluster.UserShare{{User: "u1", Shares: 3}, {User: "u2", Shares: 3}}},
		{Name: "a2", Parent: "account0", Shares: 1, Users: []cluster.UserShare{{User: "u1", Shares: 3}, {User: "u2", Shares: 3}}},
	}
	if !reflect.DeepEqual(a.Accounts, wantAcct) {
		t.Errorf("accounts\n%+v\nwant\n%+v", a.Accounts, wantAcct)
	}
	if want := []cluster.SlurmQOS{{Name: "normal"}, {Name: "supporters", Priority: 50}}; !reflect.DeepEqual(a.QOS, want) {
		t.Errorf("qos %+v; want %+v", a.QOS, want)
	}
	var unused []string
	for _, u := range a.Unused {
		unused = append(unused, u.Key)
	}
	if got := strings.Join(unused, " "); got != "add cluster" {
		t.Errorf("unused %q", got)
	}
	for _, c := range []struct{ text, want string }{
		{"add user u DefaultAccount=nowhere", `s.script:1: user "u": account "nowhere" was not added before`},
		{"add account a Parent=p", `s.script:1: parent account "p" was not added before`},
		{"add account a Fairshare=parent", `s.script:1: Fairshare: "parent": want an integer from 0 to 10^9 (parent is not supported)`},
		{"add qos q Priority=high", `s.script:1: Priority="high": want an integer from 0 to 4294967295`},
	} {
		_, err := ParseSacctmgr(strings.NewReader(c.text), "s.script")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v; want %s", c.text, err, c.want)
		}
	}
}

// TestGres: gres.conf's count (Count, else the File devices, else 1) and
// type, lines without NodeName for every node, and the checks against
// slurm.conf's Gres.
func TestGres(t *testing.T) {
	g, err := ParseGres(strings.NewReader("AutoDetect=off\nNodeName=g[1-2] Name=gpu Type=v100 File=/dev/nvidia[0-1]\nNodeName=g3 Name=gpu Count=4\nName=mps Count=100\n"), "g.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]GresEntry{"g1": {{"v100", 2, 2}}, "g2": {{"v100", 2, 2}}, "g3": {{"", 4, 3}}}
	if !reflect.DeepEqual(g.Nodes, want) {
		t.Errorf("nodes %+v; want %+v", g.Nodes, want)
	}
	c := parse(t, "NodeName=g1 Gres=gpu:2\nNodeName=g2 Gres=gpu:3\nNodeName=g3\n")
	warn := g.apply(c)
	if c.Nodes[0].GPUType != "v100" || c.Nodes[0].GPUs != 2 || c.Nodes[1].GPUs != 3 || c.Nodes[2].GPUs != 0 {
		t.Errorf("nodes %+v", c.Nodes)
	}
	if len(warn) != 2 || !strings.Contains(warn[0], "node g2: 2 GPUs here, 3 in its Gres (s.conf:2)") ||
		!strings.Contains(warn[1], "node g3 has GPUs here but no Gres on its NodeName line") {
		t.Errorf("warnings %q", warn)
	}
	if _, err := ParseGres(strings.NewReader("NodeName=g1 Name=gpu Count=x\n"), "g.conf"); err == nil ||
		err.Error() != `g.conf:1: Count="x": not a count` {
		t.Errorf("error %v", err)
	}
}
