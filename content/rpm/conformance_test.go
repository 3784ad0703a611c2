package rpm_test

import (
	"os"
	"testing"

	"pith/content/contenttest"
	"pith/content/rpm"
)

func TestConformance(t *testing.T) {
	contenttest.Run(t, contenttest.Fixture{Types: []contenttest.Maker{contenttest.Type(rpm.New)}, Repository: rpm.RepoType,
		Upstream: os.DirFS(data), RemotePath: "yum-katello/zoo/", Index: []string{"repodata/repomd.xml", ".treeinfo", "treeinfo"},
		Present: map[string]int{rpm.AdvisoryType: 7, rpm.DistributionTreeType: 1, rpm.ModulemdType: 6, rpm.DefaultsType: 3,
			rpm.PackageType: 20, rpm.CategoryType: 1, rpm.EnvironmentType: 1, rpm.GroupType: 2, rpm.RepoMetadataFileType: 1}})
}
