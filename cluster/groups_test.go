package cluster

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// groupsFile holds nested user and host groups used by queues, limits and
// shares.
const groupsFile = "testdata/scenario/groups.yaml"

// TestGroupsLoad: groups are kept as written; their flat expansions,
// the queue's host list and the limits see through them.
func TestGroupsLoad(t *testing.T) {
	c, err := Load(groupsFile)
	if err != nil {
		t.Fatal(err)
	}
	wantUG := []UserGroup{
		{Name: "all_chem", Members: []string{"chem", "carol"}},
		{Name: "chem", Members: []string{"alice", "bob"}},
		{Name: "staff", Members: []string{"all_chem", "dave"}, Shares: []UserShare{{"all_chem", 3}, {"default", 2}}},
	}
	if !reflect.DeepEqual(c.UserGroups, wantUG) {
		t.Errorf("UserGroups = %+v\nwant %+v", c.UserGroups, wantUG)
	}
	wantHG := []HostGroup{{Name: "gpu_hosts", Members: []string{"g2", "g1"}}, {Name: "big", Members: []string{"gpu_hosts", "n1", "g1"}}}
	if !reflect.DeepEqual(c.HostGroups, wantHG) {
		t.Errorf("HostGroups = %+v\nwant %+v", c.HostGroups, wantHG)
	}
	// Users that groups list, sorted: alice bob carol dave = IDs 0..3.
	if got, want := c.GroupUsers(), []string{"alice", "bob", "carol", "dave"}; !reflect.DeepEqual(got, want) {
		t.Errorf("GroupUsers = %v, want %v", got, want)
	}
	for _, x := range []struct {
		group string
		want  []UserID
	}{{"all_chem", []UserID{0, 1, 2}}, {"chem", []UserID{0, 1}}, {"staff", []UserID{0, 1, 2, 3}}} {
		g, ok := c.UserGroupByName(x.group)
		if !ok {
			t.Fatalf("no group %s", x.group)
		}
		if got := c.UserGroupUsers(g); !reflect.DeepEqual(got, x.want) {
			t.Errorf("%s: users %v, want %v", x.group, got, x.want)
		}
	}
	for _, x := range []struct {
		group string
		want  []HostID
	}{{"gpu_hosts", []HostID{0, 2}}, {"big", []HostID{0, 2, 3}}} {
		g, _ := c.HostGroupByName(x.group)
		if got := c.HostGroupHosts(g); !reflect.DeepEqual(got, x.want) {
			t.Errorf("%s: hosts %v, want %v", x.group, got, x.want)
		}
	}
	if got, want := c.Queues[0].Hosts, []HostID{0, 1, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("queue gpu hosts %v, want %v (g1 h9 g2)", got, want)
	}
	if got, want := c.Queues[1].Shares, []UserShare{{"chem", 10}, {"default", 1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("shares %v, want %v", got, want)
	}
	// Limits keep the names as written; the limit plugin expands them.
	if got := c.Limits[1].Users; !reflect.DeepEqual(got, Consumers{Names: []string{"chem", "erin"}, PerConsumer: true}) {
		t.Errorf("chem_each users %+v", got)
	}
	if got, want := c.ExpandHosts(c.Limits[2].Hosts.Names), []HostID{0, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("gpu_slots hosts %v, want %v", got, want)
	}
	set := c.NewUserSet([]string{"chem", "erin"})
	for user, want := range map[string]bool{"alice": true, "bob": true, "erin": true, "carol": false, "dave": false, "chem": false, "zed": false} {
		if set.Has(user) != want {
			t.Errorf("{chem, erin} has %s: %v, want %v", user, !want, want)
		}
	}
	all, _ := c.UserGroupByName("all_chem")
	if !c.InUserGroup("alice", all) || !c.InUserGroup("carol", all) || c.InUserGroup("dave", all) {
		t.Error("all_chem membership wrong")
	}
}

// TestGroupsConfig: a live configuration takes the same sections.
func TestGroupsConfig(t *testing.T) {
	data, err := os.ReadFile(groupsFile)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := ParseConfig("c.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.UserGroups) != 3 || len(c.HostGroups) != 2 {
		t.Errorf("groups %d user, %d host", len(c.UserGroups), len(c.HostGroups))
	}
}

// TestGroupsInit: a cluster built in code has its groups checked and
// expanded by Init.
func TestGroupsInit(t *testing.T) {
	c := &Cluster{Hosts: []Host{{Name: "a", Slots: 1}}, Queues: []Queue{{Name: "q"}},
		UserGroups: []UserGroup{{Name: "x", Members: []string{"y"}}, {Name: "y", Members: []string{"u", "x"}}}}
	if err := c.Init(); err == nil || err.Error() != "cycle of user groups: x → y → x" {
		t.Errorf("cycle: got %v", err)
	}
	c.UserGroups = []UserGroup{{Name: "x", Members: []string{"u", "v"}}}
	c.HostGroups = []HostGroup{{Name: "hg", Members: []string{"a", "b"}}}
	if err := c.Init(); err == nil || err.Error() != `unknown host or host group "b"` {
		t.Errorf("unknown host: got %v", err)
	}
	c.HostGroups = []HostGroup{{Name: "hg", Members: []string{"a"}}}
	if err := c.Init(); err != nil {
		t.Fatal(err)
	}
	if !c.InUserGroup("v", 0) || c.InUserGroup("w", 0) {
		t.Error("membership of x")
	}
}

// TestGroupsBounded: a chain of groups, each holding the previous one and
// a user of its own, expands to 1 + 2 + … members: past MaxGroupMembers
// it is an error, found in bounded time; a group of 200,000 users nested
// ten deep (2,000,000 entries) loads.
func TestGroupsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(h1 + "user_groups:\n  g0: [u0]\n")
	for i := 1; i < 3000; i++ {
		fmt.Fprintf(&b, "  g%d: [g%d, u%d]\n", i, i-1, i)
	}
	start := time.Now()
	_, err := Parse("chain.yaml", []byte(b.String()))
	// After g0..g2894 (2895 groups): 2895×2896/2 = 4,191,960 entries;
	// g2895 holds 2896 more: 4,194,856 > 4,194,304.
	want := fmt.Sprintf(`chain.yaml:2899:3: user_groups.g2895: user group "g2895": the groups' members, subgroups expanded, pass %d in all`, MaxGroupMembers)
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}

	b.Reset()
	b.WriteString(h1 + "user_groups:\n  w0: [")
	for i := range 200_000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "u%d", i)
	}
	b.WriteString("]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "  w%d: [w%d]\n", i, i-1)
	}
	c, err := Parse("wide.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := c.UserGroupByName("w9"); len(c.UserGroupUsers(g)) != 200_000 || !c.InUserGroup("u199999", g) {
		t.Error("w9 does not hold the 200,000 users")
	}
}
