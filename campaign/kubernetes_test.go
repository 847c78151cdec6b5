package campaign

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/internal/kubetest"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const testLab = "name: Lab_1\ntopology: {}\n"

func testPlan(name string) Plan {
	return Plan{Lab: "/labs/lab.yaml", Name: "Lab_1", Shards: 4, Out: "/scratch/c", Clock: clockNamed(name), Quick: true, Binary: "/opt/atmlab", Image: "registry.example/atmlab:1"}
}

// decode reads a manifest file's documents strictly (a field the API
// types lack is an error) into the API types their kind names.
func decode(t *testing.T, data []byte) []any {
	t.Helper()
	var objs []any
	for _, doc := range strings.Split(string(data), "\n---\n")[1:] { // [0]: the comment
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		var o any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ConfigMap":
			o = &corev1.ConfigMap{}
		case "v1 PersistentVolumeClaim":
			o = &corev1.PersistentVolumeClaim{}
		case "batch/v1 Job":
			o = &batchv1.Job{}
		default:
			t.Fatalf("unexpected object %s %s", tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), o); err != nil {
			t.Fatalf("%s: %v\n%s", tm.Kind, err, doc)
		}
		objs = append(objs, o)
	}
	return objs
}

// files returns the engine's files by name.
func files(t *testing.T, fs []File, err error) map[string][]byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, f := range fs {
		m[f.Name] = f.Data
	}
	return m
}

// TestKubernetesManifest decodes the manifests strictly into k8s.io/api's
// types and checks each object: the Indexed Job, the shard each index
// runs, the volumes and exactly the privileges docs/campaigns.md states.
func TestKubernetesManifest(t *testing.T) {
	for _, clock := range []string{"real", "virtual"} {
		t.Run(clock, func(t *testing.T) {
			fs, err := KubernetesFiles(testPlan(clock), []byte(testLab))
			m := files(t, fs, err)
			objs := decode(t, m[KubeShards])
			if len(objs) != 3 {
				t.Fatalf("%d objects in %s, want ConfigMap, claim, Job", len(objs), KubeShards)
			}
			cm, pvc, job := objs[0].(*corev1.ConfigMap), objs[1].(*corev1.PersistentVolumeClaim), objs[2].(*batchv1.Job)
			if cm.Name != "atmlab-lab-1-lab" || cm.Data["lab.yaml"] != testLab {
				t.Errorf("ConfigMap %s holds %q, want atmlab-lab-1-lab with the lab file", cm.Name, cm.Data)
			}
			if pvc.Name != "atmlab-lab-1-results" || !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) {
				t.Errorf("claim %s %v, want atmlab-lab-1-results ReadWriteMany", pvc.Name, pvc.Spec.AccessModes)
			}
			s := job.Spec
			if job.Name != "atmlab-lab-1" || s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
				*s.Completions != 4 || *s.Parallelism != 4 {
				t.Fatalf("job %s: mode %v, completions %v, parallelism %v; want atmlab-lab-1 Indexed 4 4", job.Name, s.CompletionMode, *s.Completions, *s.Parallelism)
			}
			pod := s.Template.Spec
			if len(pod.Containers) != 1 || pod.RestartPolicy != corev1.RestartPolicyNever {
				t.Fatalf("pod: %d containers, restart %s", len(pod.Containers), pod.RestartPolicy)
			}
			c := pod.Containers[0]
			if c.Image != "registry.example/atmlab:1" {
				t.Errorf("image %q", c.Image)
			}
			if len(c.Env) != 1 || c.Env[0].Name != "JOB_COMPLETION_INDEX" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
				t.Errorf("env %+v, want JOB_COMPLETION_INDEX from the completion-index annotation", c.Env)
			}
			// Index 2 runs shard 3 of 4 into /results/shard-3.
			args := runScript(t, c.Command, "JOB_COMPLETION_INDEX=2")
			want := "lab run /lab/lab.yaml --shard 3/4 --out /results/shard-3 --append --clock " + clock + " --quick"
			if args != want {
				t.Errorf("index 2 ran atmlab %q, want %q", args, want)
			}
			mounts := map[string]string{}
			for _, vm := range c.VolumeMounts {
				mounts[vm.Name] = vm.MountPath
			}
			vols := map[string]corev1.VolumeSource{}
			for _, v := range pod.Volumes {
				vols[v.Name] = v.VolumeSource
			}
			if mounts["lab"] != "/lab" || vols["lab"].ConfigMap.Name != cm.Name || mounts["results"] != "/results" || vols["results"].PersistentVolumeClaim.ClaimName != pvc.Name {
				t.Errorf("mounts %v volumes %+v: want the ConfigMap at /lab, the claim at /results", mounts, vols)
			}

			sc := c.SecurityContext
			common := !*sc.Privileged && !*sc.AllowPrivilegeEscalation && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) &&
				sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
			switch clock {
			case "real":
				tun := vols["tun"].HostPath
				if sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeUnconfined || !strings.Contains(c.Command[2], "\n[ -w /proc/sys/net/ipv4/ip_forward ] || mount -o remount,bind,rw /proc/sys\nexec atmlab") {
					t.Errorf("real-time shard: AppArmor %+v, script %q; want unconfined (mounts) and /proc/sys remounted writable before atmlab", sc.AppArmorProfile, c.Command[2])
				}
				if !common || *sc.RunAsUser != 0 || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}) ||
					tun == nil || tun.Path != "/dev/net/tun" || *tun.Type != corev1.HostPathCharDev || mounts["tun"] != "/dev/net/tun" || len(vols) != 3 {
					t.Errorf("real-time shard: security %+v caps %+v, tun %+v at %q; want root with NET_ADMIN, NET_RAW, SYS_ADMIN only and /dev/net/tun", sc, sc.Capabilities, tun, mounts["tun"])
				}
				aa := pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
				if len(aa) != 1 || aa[0].TopologyKey != "kubernetes.io/hostname" || aa[0].LabelSelector.MatchLabels["atmlab/clock"] != "real" || s.Template.Labels["atmlab/clock"] != "real" {
					t.Errorf("real-time shards must keep to one per node: anti-affinity %+v, labels %v", aa, s.Template.Labels)
				}
			case "virtual":
				if sc.AppArmorProfile != nil || strings.Contains(c.Command[2], "mount") {
					t.Errorf("virtual-time shard: AppArmor %+v, script %q; want the runtime's default, no mounts", sc.AppArmorProfile, c.Command[2])
				}
				if !common || *sc.RunAsUser != 65534 || !*sc.RunAsNonRoot || len(sc.Capabilities.Add) != 0 || len(vols) != 2 || pod.Affinity != nil {
					t.Errorf("virtual-time shard: security %+v caps %+v volumes %v affinity %v; want nobody with no capabilities, no host paths", sc, sc.Capabilities, vols, pod.Affinity)
				}
			}

			mobjs := decode(t, m[KubeMerge])
			if len(mobjs) != 1 {
				t.Fatalf("%d objects in %s, want the merge Job", len(mobjs), KubeMerge)
			}
			merge := mobjs[0].(*batchv1.Job)
			mc := merge.Spec.Template.Spec.Containers[0]
			msc := mc.SecurityContext
			if merge.Name != "atmlab-lab-1-merge" || *msc.RunAsUser != 65534 || !*msc.RunAsNonRoot || len(msc.Capabilities.Add) != 0 ||
				merge.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name || mc.VolumeMounts[0].MountPath != "/results" {
				t.Errorf("merge job %s: %+v; want nobody without capabilities, the claim at /results", merge.Name, merge.Spec.Template.Spec)
			}
			if got := runScript(t, mc.Command); got != "report /results/shard-*/ --out /results" { // no shard folders here: the glob stays
				t.Errorf("merge ran atmlab %q", got)
			}
		})
	}
}

// TestStrictDecoding shows the schema check refuses a field the API lacks
// (a misspelt completionMode would otherwise pass as a plain Job).
func TestStrictDecoding(t *testing.T) {
	doc := "apiVersion: batch/v1\nkind: Job\nspec:\n  completionMod: Indexed\n"
	if err := yaml.UnmarshalStrict([]byte(doc), &batchv1.Job{}); err == nil || !strings.Contains(err.Error(), "completionMod") {
		t.Fatalf("strict decoding of a misspelt field: %v", err)
	}
}

// runScript runs a container's command, /bin/sh -c SCRIPT, with a fake
// atmlab on the PATH and returns the arguments atmlab got.
func runScript(t *testing.T, command []string, env ...string) string {
	t.Helper()
	if len(command) != 3 || command[0] != "/bin/sh" || command[1] != "-c" {
		t.Fatalf("command %q, want /bin/sh -c SCRIPT", command)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "atmlab"), []byte("#!/bin/sh\necho \"$@\"\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "mount"), []byte("#!/bin/sh\n"), 0o755) // a real-time shard's remount of /proc/sys
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append([]string{"PATH=" + dir + ":/usr/bin:/bin"}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", command[2], err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestKubectlDryRun passes the manifests through kubectl apply
// --dry-run=client --validate=false -o yaml. kubectl maps kinds to
// resources by asking an API server, even for a client-side dry run: a
// stand-in answers its discovery requests (and "not found" for the objects
// themselves, so apply takes them as new).
func TestKubectlDryRun(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is missing: .ci/run installs Debian's kubernetes-client when it is")
		}
		t.Skip("no kubectl: apt-get install kubernetes-client")
	}
	srv := httptest.NewServer(kubetest.Discovery([]kubetest.Resource{{Name: "configmaps", Kind: "ConfigMap"}, {Name: "persistentvolumeclaims", Kind: "PersistentVolumeClaim"}}, "batch", []kubetest.Resource{{Name: "jobs", Kind: "Job"}}))
	defer srv.Close()
	for _, clock := range []string{"real", "virtual"} {
		fs, err := KubernetesFiles(testPlan(clock), []byte(testLab))
		m := files(t, fs, err)
		dir := t.TempDir()
		for name, data := range m {
			os.WriteFile(filepath.Join(dir, name), data, 0o644)
		}
		for _, name := range []string{KubeShards, KubeMerge} {
			cmd := exec.Command(kubectl, "apply", "--dry-run=client", "--validate=false", "-o", "yaml", "-f", filepath.Join(dir, name),
				"--server", srv.URL, "--namespace", "default")
			cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "none"), "HOME="+dir)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("kubectl apply --dry-run=client %s (%s time): %v\n%s", name, clock, err, stderr.String())
			}
			// kubectl prints a List of what it would create: the same objects.
			var list struct {
				Items []map[string]any `json:"items"`
			}
			if err := yaml.Unmarshal(out, &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) == 0 { // a single object is printed as itself
				var o map[string]any
				yaml.Unmarshal(out, &o)
				list.Items = append(list.Items, o)
			}
			var kinds []string
			for _, o := range list.Items {
				kinds = append(kinds, o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string))
			}
			want := []string{"ConfigMap/atmlab-lab-1-lab", "PersistentVolumeClaim/atmlab-lab-1-results", "Job/atmlab-lab-1"}
			if name == KubeMerge {
				want = []string{"Job/atmlab-lab-1-merge"}
			}
			if !slices.Equal(kinds, want) {
				t.Errorf("kubectl would apply %v from %s, want %v\n%s", kinds, name, want, out)
			}
		}
	}
}

// TestKubernetesSubmit runs submit.sh with a fake kubectl: the merge Job
// is applied once the Indexed Job has ended, complete or failed (the fake
// says so on its third query), not before.
func TestKubernetesSubmit(t *testing.T) {
	for _, outcome := range []string{"Complete", "Failed"} {
		dir := t.TempDir()
		fs, err := KubernetesFiles(testPlan("virtual"), []byte(testLab))
		for name, data := range files(t, fs, err) {
			os.WriteFile(filepath.Join(dir, name), data, 0o755)
		}
		fake := filepath.Join(dir, "bin")
		os.Mkdir(fake, 0o755)
		calls := filepath.Join(dir, "calls")
		os.WriteFile(filepath.Join(fake, "kubectl"), []byte(`#!/bin/sh
echo "$*" >>`+calls+`
case "$1" in
get) [ "$(grep -c '^get' `+calls+`)" -ge 3 ] && echo "SuccessCriteriaMet `+outcome+`";;
esac
exit 0
`), 0o755)
		os.WriteFile(filepath.Join(fake, "sleep"), []byte("#!/bin/sh\necho sleep $1 >>"+calls+"\n"), 0o755)
		cmd := exec.Command("/bin/sh", filepath.Join(dir, KubeSubmit))
		cmd.Env = []string{"PATH=" + fake + ":/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "report: /results/report.html in volume claim atmlab-lab-1-results") {
			t.Fatalf("submit.sh (%s): %v\n%s", outcome, err, out)
		}
		b, _ := os.ReadFile(calls)
		get := `get job/atmlab-lab-1 -o jsonpath={.status.conditions[?(@.status=="True")].type}`
		want := strings.Join([]string{
			"apply -f campaign.yaml",
			get, "sleep 10", get, "sleep 10", get,
			"apply -f merge.yaml",
			"wait --for=condition=Complete --timeout=10m job/atmlab-lab-1-merge",
		}, "\n")
		if got := strings.TrimSpace(string(b)); got != want {
			t.Errorf("%s: kubectl called with\n%s\nwant\n%s", outcome, got, want)
		}
	}
}

// clockNamed is the clock named name (real or virtual).
func clockNamed(name string) clock.Clock {
	c, err := clock.Parse(name)
	if err != nil {
		panic(err)
	}
	return c
}
