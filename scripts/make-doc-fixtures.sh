#!/usr/bin/env bash
# Regenerates the committed document fixtures under test/fixtures/docs/.
# Needs Debian's LibreOffice Writer/Draw, qpdf and ImageMagick (not needed at test time):
#   apt-get install -y --no-install-recommends libreoffice-writer-nogui libreoffice-draw-nogui qpdf imagemagick fonts-noto-cjk
set -euo pipefail
OUT="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/docs"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

# Flat ODT header: heading styles whose display names LibreOffice exports as Word's "Heading N".
fodt_head() {
cat <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
  xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
  office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:styles>
  <style:style style:name="Standard" style:family="paragraph"><style:text-properties fo:font-size="11pt"/></style:style>
  <style:style style:name="Heading_20_1" style:display-name="Heading 1" style:family="paragraph" style:parent-style-name="Standard" style:default-outline-level="1">
   <style:paragraph-properties fo:margin-top="0.4cm" fo:margin-bottom="0.2cm"/><style:text-properties fo:font-size="18pt" fo:font-weight="bold"/></style:style>
  <style:style style:name="Heading_20_2" style:display-name="Heading 2" style:family="paragraph" style:parent-style-name="Standard" style:default-outline-level="2">
   <style:paragraph-properties fo:margin-top="0.3cm" fo:margin-bottom="0.2cm"/><style:text-properties fo:font-size="14pt" fo:font-weight="bold"/></style:style>
 </office:styles>
 <office:automatic-styles>
  <style:style style:name="PageBreak" style:family="paragraph" style:parent-style-name="Heading_20_1"><style:paragraph-properties fo:break-before="page"/></style:style>
 </office:automatic-styles>
 <office:body><office:text>
XML
}
fodt_tail() { echo ' </office:text></office:body></office:document>'; }

# --- 10-page manual: one chapter per page; only page 7 states the calibration coefficient. ---
{
fodt_head
page() { # $1 = n, $2 = title, rest = paragraphs
  local n="$1" title="$2"; shift 2
  if [ "$n" = 1 ]; then echo "<text:h text:style-name=\"Heading_20_1\" text:outline-level=\"1\">$title</text:h>"
  else echo "<text:h text:style-name=\"PageBreak\" text:outline-level=\"1\">$title</text:h>"; fi
  for p in "$@"; do echo "<text:p text:style-name=\"Standard\">$p</text:p>"; done
}
page 1 "1. Introduction to the Temporal Displacement Unit" \
  "This manual describes the installation, operation and maintenance of the Model DX-88 temporal displacement unit. The unit converts stored electrical energy into a controlled displacement field around a moving vehicle chassis." \
  "Read every chapter before the first power-up. Technicians must hold a level 3 high-voltage certificate and must wear insulated gloves whenever the housing is open." \
  "Chapter 2 lists the components, chapter 3 the power supply, chapter 4 installation, chapter 5 wiring, chapter 6 the control firmware, chapter 7 the calibration procedure, chapter 8 routine maintenance, chapter 9 troubleshooting and chapter 10 the warranty terms."
page 2 "2. Components and Materials" \
  "The assembly consists of three cylindrical discharge tubes arranged in a Y pattern, a sealed control board, an armoured input harness and a stainless steel housing rated IP54." \
  "Each discharge tube is filled with neon at a pressure of 12 millibar and is rated for 40,000 operating cycles. Replace all three tubes together; mixing old and new tubes causes uneven field geometry." \
  "The housing gasket is made of fluorosilicone and must be replaced whenever the front panel has been removed more than five times."
page 3 "3. Power Supply Requirements" \
  "The unit draws its operating energy from an external reactor or from a lightning conductor coupling. Peak input during a displacement event is 1.21 gigawatts for 0.4 seconds." \
  "Between events the standby draw is 35 watts from the vehicle's 12 volt system. A dedicated 20 ampere fuse protects the standby circuit; never bypass it with a larger fuse." \
  "Shielded cable of at least 95 square millimetres cross section is required between the reactor output and the input harness."
page 4 "4. Installation in the Vehicle" \
  "Mount the housing behind the driver seat on the supplied vibration dampers. The discharge tubes must point towards the rear window, and the housing must stand vertical within two degrees." \
  "Route the input harness along the left sill, away from the fuel line. Fix it with stainless clamps every 30 centimetres and keep a bend radius of at least 15 centimetres." \
  "After mounting, torque the four M8 housing bolts to 22 newton metres in a cross pattern."
page 5 "5. Wiring and Grounding" \
  "Connect the chassis ground stud to the vehicle frame with the braided strap supplied. Ground resistance measured between the stud and the frame must stay below 0.05 ohm." \
  "The control board takes its speed signal from the gearbox sensor through the grey connector X4. Use twisted pair cable and connect the shield at the board end only to avoid ground loops." \
  "Label every connector before disconnecting it; connectors X2 and X3 are mechanically identical but not interchangeable."
page 6 "6. Control Firmware" \
  "The firmware monitors vehicle speed, input energy and tube temperature one thousand times per second. A displacement event is armed only when the speed reading is stable for three consecutive seconds." \
  "Destination time is entered on the keypad in the dashboard panel and confirmed with the red key. The last departure time is stored in non-volatile memory and survives a loss of power." \
  "Firmware updates are installed from the service port with the technician key; the update takes about six minutes and must not be interrupted."
page 7 "7. Calibration Procedure" \
  "Calibrate the unit after installation, after any tube replacement and at least once every twelve months. Warm the unit up in standby mode for twenty minutes before starting." \
  "Connect the reference meter to the test points TP1 and TP2 and run the calibration routine from the service menu. The calibration coefficient of the flux capacitor is 42.7 gigawatts per tesla; enter this value when the routine asks for the field constant." \
  "If the measured field deviates by more than three percent from the reference, repeat the routine once. A second failure means a discharge tube is worn and must be replaced."
page 8 "8. Routine Maintenance" \
  "Every five hundred operating hours, inspect the discharge tubes for blackening near the electrodes and clean the housing vents with dry compressed air." \
  "Check the torque of the housing bolts and the condition of the braided ground strap. Replace the input harness if its insulation shows cracks or heat discoloration." \
  "Keep a maintenance log with the date, the operating hours and the technician's name for every inspection."
page 9 "9. Troubleshooting" \
  "Error E12 means the input energy dropped below the threshold during an event; check the reactor output and the shielded cable joints." \
  "Error E31 indicates tube over-temperature. Let the unit cool for one hour, then verify that the housing vents are not blocked." \
  "If the keypad shows no display, check the 20 ampere standby fuse and the connector X1 behind the dashboard panel."
page 10 "10. Warranty and Service" \
  "The manufacturer warrants the unit against defects in materials and workmanship for twenty-four months from the date of installation." \
  "The warranty does not cover damage caused by lightning couplings that exceed the rated input, by unauthorised firmware or by operation without a valid calibration record." \
  "To request service, send the maintenance log and the serial number printed on the housing label to the regional service centre."
fodt_tail
} > "$WORK/manual.fodt"

# --- DOCX: headings, a table, non-ASCII text. ---
{
fodt_head
cat <<'XML'
<text:h text:style-name="Heading_20_1" text:outline-level="1">Projektbericht Straße 7</text:h>
<text:p text:style-name="Standard">Dieser Bericht beschreibt die Sanierung der Wasserleitung in der Hauptstraße. Die Arbeiten begannen im März und endeten planmäßig im Juni.</text:p>
<text:h text:style-name="Heading_20_2" text:outline-level="2">Café notes</text:h>
<text:p text:style-name="Standard">The naïve café on the corner served as our site office; its owner kept the keys to the valve chamber.</text:p>
<text:h text:style-name="Heading_20_1" text:outline-level="1">Supplier Price Table</text:h>
<text:p text:style-name="Standard">Prices agreed with the suppliers for the second construction phase:</text:p>
<table:table table:name="Prices">
 <table:table-column table:number-columns-repeated="3"/>
 <table:table-row><table:table-cell office:value-type="string"><text:p>Supplier</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>Part</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>Unit price</text:p></table:table-cell></table:table-row>
 <table:table-row><table:table-cell office:value-type="string"><text:p>Kessler GmbH</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>Gate valve DN150</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>1,240 EUR</text:p></table:table-cell></table:table-row>
 <table:table-row><table:table-cell office:value-type="string"><text:p>Moreau SA</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>Ductile iron pipe</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>87 EUR per metre</text:p></table:table-cell></table:table-row>
</table:table>
<text:h text:style-name="Heading_20_1" text:outline-level="1">東京 office</text:h>
<text:p text:style-name="Standard">東京の事務所は設計図面の最終確認を担当しました。The Tokyo office reviewed the final drawings.</text:p>
XML
fodt_tail
} > "$WORK/report.fodt"

cd "$WORK"
soffice --headless --norestore --convert-to pdf manual.fodt >/dev/null
soffice --headless --norestore --convert-to 'docx:MS Word 2007 XML' report.fodt >/dev/null
cp manual.pdf "$OUT/manual.pdf"
cp report.docx "$OUT/report.docx"

# Corrupt: the manual cut to its first 40%, no trailer.
head -c $(( $(stat -c %s manual.pdf) * 4 / 10 )) manual.pdf > "$OUT/corrupt.pdf"
# Encrypted: AES-256 with a user password.
qpdf --encrypt user-secret owner-secret 256 -- manual.pdf "$OUT/encrypted.pdf"
# Scanned: one page that is only a raster image (text drawn into pixels, no text layer).
convert -size 620x877 xc:white -font /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf -fill black -pointsize 28 -annotate +60+120 'Scanned invoice 2024-117' \
  -draw 'rectangle 60,200 560,204' -pointsize 20 -annotate +60+260 'Total due: 350 EUR' scan.png
soffice --headless --norestore --convert-to pdf scan.png >/dev/null
cp scan.pdf "$OUT/scanned.pdf"

cat > "$OUT/notes.md" <<'MD'
# Release checklist

Steps to follow before tagging a release of the telemetry service.

## Database migrations

Run the migrations against a copy of the production snapshot first. A migration that locks
the `events` table for more than two seconds must be split into batches of 10,000 rows.

## Rollback plan

Keep the previous container image tagged as `stable-previous`. Rolling back means pointing the
deployment at that tag and replaying the message queue from the last checkpoint.

```
# not a heading: code block
kubectl rollout undo deployment/telemetry
```
MD
ls -l "$OUT"
