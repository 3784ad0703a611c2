package comps_test

import (
	"fmt"
	"os"
	"strings"

	"pith/content/rpm/comps"
)

func ExampleParse() {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<comps>
  <group>
    <id>editors</id>
    <name>Editors</name>
    <name xml:lang="de">Editoren</name>
    <description>Text editors</description>
    <packagelist>
      <packagereq type="default">vim-enhanced</packagereq>
      <packagereq type="conditional" requires="vim-enhanced">vim-spell</packagereq>
    </packagelist>
  </group>
</comps>`
	c, err := comps.Parse(strings.NewReader(doc), "comps.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	g := c.Groups[0]
	fmt.Println(g.ID, g.NameByLang["de"], g.UserVisible, g.Packages[1].Type, g.Packages[1].Requires)
	if err := comps.Write(os.Stdout, c); err != nil {
		fmt.Println(err)
	}
	// Output:
	// editors Editoren true conditional vim-enhanced
	// <?xml version="1.0" encoding="UTF-8"?>
	// <!DOCTYPE comps PUBLIC "-//Red Hat, Inc.//DTD Comps info//EN" "comps.dtd">
	// <comps>
	//   <group>
	//     <id>editors</id>
	//     <name>Editors</name>
	//     <name xml:lang="de">Editoren</name>
	//     <description>Text editors</description>
	//     <default>false</default>
	//     <uservisible>true</uservisible>
	//     <packagelist>
	//       <packagereq type="default">vim-enhanced</packagereq>
	//       <packagereq type="conditional" requires="vim-enhanced">vim-spell</packagereq>
	//     </packagelist>
	//   </group>
	// </comps>
}
