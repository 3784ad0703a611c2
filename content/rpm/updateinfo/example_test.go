package updateinfo_test

import (
	"fmt"
	"os"
	"strings"

	"pith/content/rpm/updateinfo"
)

func ExampleParse() {
	doc := `<?xml version="1.0"?>
<updates>
  <update from="security@example.com" status="final" type="security" version="1">
    <id>EXA-2024:0001</id>
    <title>Important: zlib security update</title>
    <issued date="2024-05-01 00:00:00"/>
    <references>
      <reference href="https://example.com/CVE-2024-0001" id="CVE-2024-0001" type="cve"/>
    </references>
    <pkglist>
      <collection short="el9">
        <name>Example Linux 9</name>
        <package name="zlib" version="1.2.11" release="40.el9" arch="x86_64">
          <filename>zlib-1.2.11-40.el9.x86_64.rpm</filename>
        </package>
      </collection>
    </pkglist>
  </update>
</updates>`
	w := updateinfo.NewWriter(os.Stdout)
	err := updateinfo.Parse(strings.NewReader(doc), "updateinfo.xml", func(u *updateinfo.Update) error {
		fmt.Println(u.ID, u.Type, u.References[0].ID, u.Pkglist[0].Packages[0].Epoch)
		return w.Write(u)
	})
	if err == nil {
		err = w.Close()
	}
	fmt.Println(err)
	// Output:
	// EXA-2024:0001 security CVE-2024-0001 0
	// <?xml version="1.0" encoding="UTF-8"?>
	// <updates>
	//   <update from="security@example.com" status="final" type="security" version="1">
	//     <id>EXA-2024:0001</id>
	//     <title>Important: zlib security update</title>
	//     <issued date="2024-05-01 00:00:00"/>
	//     <references>
	//       <reference href="https://example.com/CVE-2024-0001" id="CVE-2024-0001" type="cve"/>
	//     </references>
	//     <pkglist>
	//       <collection short="el9">
	//         <name>Example Linux 9</name>
	//         <package name="zlib" version="1.2.11" release="40.el9" epoch="0" arch="x86_64">
	//           <filename>zlib-1.2.11-40.el9.x86_64.rpm</filename>
	//         </package>
	//       </collection>
	//     </pkglist>
	//   </update>
	// </updates>
	// <nil>
}
