package placement

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/atmlab/atmlab/campaign"
	"github.com/atmlab/atmlab/internal/kubetest"
)

// decodeManifest reads the manifest's documents strictly (a field the API
// types lack is an error) into the API types their kinds name.
func decodeManifest(t *testing.T, data []byte) (*corev1.ConfigMap, *corev1.Service, *appsv1.StatefulSet) {
	t.Helper()
	var cm *corev1.ConfigMap
	var svc *corev1.Service
	var sts *appsv1.StatefulSet
	for _, doc := range strings.Split(string(data), "\n---\n")[1:] { // [0]: the comment
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		var o any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ConfigMap":
			cm = &corev1.ConfigMap{}
			o = cm
		case "v1 Service":
			svc = &corev1.Service{}
			o = svc
		case "apps/v1 StatefulSet":
			sts = &appsv1.StatefulSet{}
			o = sts
		default:
			t.Fatalf("unexpected object %s %s", tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), o); err != nil {
			t.Fatalf("%s: %v\n%s", tm.Kind, err, doc)
		}
	}
	if cm == nil || svc == nil || sts == nil {
		t.Fatalf("want a ConfigMap, a Service and a StatefulSet:\n%s", data)
	}
	return cm, svc, sts
}

// TestKubernetesStatefulSetGivesEachPartAStableName: one pod per part,
// started at once, behind a headless Service that publishes the pods'
// names before they are ready, with the real-time pod's privileges (and
// no more) and the lab file from the ConfigMap.
func TestKubernetesStatefulSetGivesEachPartAStableName(t *testing.T) {
	s := testSplit(t, campaign.Kubernetes)
	b, err := KubernetesFile(s)
	if err != nil {
		t.Fatal(err)
	}
	cm, svc, sts := decodeManifest(t, b)
	if cm.Data["lab.yaml"] != string(s.Src) {
		t.Errorf("ConfigMap %v", cm.Data)
	}
	if svc.Name != "atmlab-twoparts-split" || svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses ||
		svc.Spec.Selector["atmlab/split"] != svc.Name || len(svc.Spec.Ports) != 2 || svc.Spec.Ports[1].Port != 47001 || svc.Spec.Ports[1].Protocol != corev1.ProtocolUDP {
		t.Errorf("Service %+v", svc.Spec)
	}
	sp := sts.Spec
	if *sp.Replicas != 2 || sp.ServiceName != svc.Name || sp.PodManagementPolicy != appsv1.ParallelPodManagement ||
		sp.Template.Labels["atmlab/split"] != svc.Name || sp.Selector.MatchLabels["atmlab/split"] != svc.Name {
		t.Errorf("StatefulSet %+v", sp)
	}
	pod := sp.Template.Spec
	c := pod.Containers[0]
	if c.Image != s.Image || !slices.Equal(c.SecurityContext.Capabilities.Add, campaign.RealTimeCapabilities) || *c.SecurityContext.Privileged ||
		sp.Template.Labels["atmlab/clock"] != "real" || pod.Affinity.PodAntiAffinity == nil {
		t.Errorf("pod %+v", pod)
	}
	var mounts []string
	for _, m := range c.VolumeMounts {
		mounts = append(mounts, m.MountPath)
	}
	if !slices.Equal(mounts, []string{"/lab", "/dev/net/tun"}) {
		t.Errorf("mounts %v", mounts)
	}
}

// TestKubernetesPodRunsThePartOfItsOrdinal: the pod named <name>-k runs
// part k, its peers by their pods' names under the Service.
func TestKubernetesPodRunsThePartOfItsOrdinal(t *testing.T) {
	s := testSplit(t, campaign.Kubernetes)
	_, _, sts := KubernetesObjects(s)
	script := sts.Spec.Template.Spec.Containers[0].Command
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "atmlab"), []byte("#!/bin/sh\necho \"$@\"\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "mount"), []byte("#!/bin/sh\n"), 0o755)
	for host, want := range map[string]string{
		"atmlab-twoparts-split-0": "up /lab/lab.yaml --part left --cut-listen 0.0.0.0:47000 --cut-peer right=atmlab-twoparts-split-1.atmlab-twoparts-split:47001",
		"atmlab-twoparts-split-1": "up /lab/lab.yaml --part right --cut-listen 0.0.0.0:47001 --cut-peer left=atmlab-twoparts-split-0.atmlab-twoparts-split:47000",
	} {
		cmd := exec.Command(script[0], script[1:]...)
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOSTNAME=" + host}
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%s: %v\n%s\nwant %s", host, err, out, want)
		}
	}
	cmd := exec.Command(script[0], script[1:]...)
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOSTNAME=atmlab-twoparts-split-2"}
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no part 2") {
		t.Errorf("a third pod: %v\n%s", err, out)
	}
}

// TestKubectlDryRunOfSplitLab passes the manifest through kubectl apply
// --dry-run=client, as campaign's test does: a stand-in API server
// answers kubectl's discovery (core v1 and apps/v1) and "not found" for
// the objects, which apply then takes as new.
func TestKubectlDryRunOfSplitLab(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is missing: .ci/run installs Debian's kubernetes-client when it is")
		}
		t.Skip("no kubectl: apt-get install kubernetes-client")
	}
	srv := httptest.NewServer(kubetest.Discovery([]kubetest.Resource{{Name: "configmaps", Kind: "ConfigMap"}, {Name: "services", Kind: "Service"}}, "apps", []kubetest.Resource{{Name: "statefulsets", Kind: "StatefulSet"}}))
	defer srv.Close()
	s := testSplit(t, campaign.Kubernetes)
	b, err := KubernetesFile(s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, KubeManifest)
	os.WriteFile(file, b, 0o644)
	cmd := exec.Command(kubectl, "apply", "--dry-run=client", "--validate=false", "-o", "yaml", "-f", file, "--server", srv.URL, "--namespace", "default")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "none"), "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=client: %v\n%s", err, stderr.String())
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range list.Items {
		kinds = append(kinds, o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string))
	}
	want := []string{"ConfigMap/atmlab-twoparts-split-lab", "Service/atmlab-twoparts-split", "StatefulSet/atmlab-twoparts-split"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kubectl would apply %v, want %v\n%s", kinds, want, out)
	}
}

// fakeKubectl puts a kubectl on PATH that logs its calls, says pod K's
// part is ready, and lists the pods as running (pod 1 restarted from
// its get'th listing on when get is set).
func fakeKubectl(t *testing.T, get ...int) (calls string) {
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	os.WriteFile(filepath.Join(dir, "kubectl"), []byte(`#!/bin/sh
echo "$*" >>`+calls+`
case "$1" in
logs) echo "lab twoparts-${2##*-} ready: 2 hosts";;
get) r=0; [ -n "`+strconv.Itoa(append(get, 0)[0])+`" ] && [ "`+strconv.Itoa(append(get, 0)[0])+`" -gt 0 ] && [ "$(grep -c '^get' `+calls+`)" -ge "`+strconv.Itoa(append(get, 0)[0])+`" ] && r=1
   printf 'atmlab-twoparts-split-0 Running 0\natmlab-twoparts-split-1 Running %s\n' $r;;
delete) echo 'statefulset.apps "atmlab-twoparts-split" deleted';;
esac
`), 0o755)
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return calls
}

// TestKubernetesUpAppliesWaitsAndDeletes: up applies the manifest, reads
// the pods' logs until each part is ready, and once interrupted keeps the
// logs in the folder and deletes what it applied.
func TestKubernetesUpAppliesWaitsAndDeletes(t *testing.T) {
	poll = time.Millisecond
	calls := fakeKubectl(t)
	s := testSplit(t, campaign.Kubernetes)
	ctx, cancel := context.WithCancel(context.Background())
	w := writerFunc(func(b []byte) (int, error) {
		if strings.Contains(string(b), ": ready (2 parts)") {
			cancel()
		}
		return len(b), nil
	})
	if err := Up(ctx, s, w); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(calls)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	manifest := filepath.Join(s.Out, KubeManifest)
	if got[0] != "apply -f "+manifest || got[len(got)-1] != "delete -f "+manifest+" --wait=true --timeout=2m0s" {
		t.Errorf("kubectl ran:\n%s", b)
	}
	for k, part := range s.Parts {
		log, _ := os.ReadFile(filepath.Join(s.Out, "part-"+part+".log"))
		if want := "lab twoparts-" + strconv.Itoa(k) + " ready: 2 hosts\n"; string(log) != want {
			t.Errorf("part-%s.log: %q, want %q", part, log, want)
		}
	}
	if _, err := os.Stat(manifest); err != nil {
		t.Error(err)
	}
}

// TestKubernetesDownDeletesByLabel: down deletes the split lab's objects
// by their label, whatever is left of them.
func TestKubernetesDownDeletesByLabel(t *testing.T) {
	calls := fakeKubectl(t)
	var out strings.Builder
	if err := Down(testSplit(t, campaign.Kubernetes), &out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(calls)
	if want := "delete statefulset,service,configmap -l atmlab/split=atmlab-twoparts-split --ignore-not-found --wait=true --timeout=2m0s\n"; string(b) != want {
		t.Errorf("kubectl ran %q, want %q", b, want)
	}
	if !strings.Contains(out.String(), "deleted") {
		t.Errorf("down said %q", out.String())
	}
}

// TestKubernetesRestartAfterReadyEndsTheLab: a pod restarted while the
// parts start is no end (its part may have failed before its peer's name
// resolved), but one restarted once every part is ready has lost its
// part's lab, and the split lab comes down, saying which.
func TestKubernetesRestartAfterReadyEndsTheLab(t *testing.T) {
	poll, kubeLook = time.Millisecond, 0
	t.Cleanup(func() { kubeLook = 5 * time.Second })
	fakeKubectl(t, 3)
	s := testSplit(t, campaign.Kubernetes)
	err := Up(context.Background(), s, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "pod atmlab-twoparts-split-1: Running 1 (phase, restarts)") {
		t.Errorf("%v", err)
	}
}
