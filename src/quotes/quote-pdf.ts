import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { create, type Font } from 'fontkit';
import PDFDocument from 'pdfkit';
import type { DocumentLine, QuoteDocumentModel } from './quote-document.ts';

// DejaVu Sans, embedded (subset) in every PDF: the PDF standard fonts cover Latin-1 alone, and a currency's
// symbol often lies outside it (₹, ₩, ₺, ₴, ₦). Parsed once for every document: pdfkit takes a fontkit font as it
// is, where from the file's bytes it parsed the font's tables again for each document.
const fontFile = (name: string) =>
  create(readFileSync(createRequire(import.meta.url).resolve(`dejavu-fonts-ttf/ttf/${name}`))) as Font;
const regular = fontFile('DejaVuSans.ttf');
const bold = fontFile('DejaVuSans-Bold.ttf');

const page = { width: 595.28, height: 841.89, margin: 48 };
const right = page.width - page.margin;
const ink = '#1d2430';
const muted = '#6b7585';
const rule = '#d9dee5';

/** The table's columns: x and width, numbers right-aligned. */
const columns = {
  product: { x: page.margin, width: 235 },
  quantity: { x: page.margin + 235, width: 50 },
  unitPrice: { x: page.margin + 285, width: 90 },
  discount: { x: page.margin + 375, width: 50 },
  total: { x: page.margin + 425, width: right - page.margin - 425 },
};

type Doc = InstanceType<typeof PDFDocument>;

/** A large faint DRAFT across the page, drawn where the text cursor is left as it was. */
function watermark(doc: Doc): void {
  const { x, y } = doc;
  doc.save();
  doc.rotate(-30, { origin: [page.width / 2, page.height / 2] });
  doc.font('bold').fontSize(120).fillColor('#b42318').fillOpacity(0.08);
  doc.text('DRAFT', 0, page.height / 2 - 70, { width: page.width, align: 'center', lineBreak: false });
  doc.restore();
  doc.fillOpacity(1);
  doc.x = x;
  doc.y = y;
}

function tableHead(doc: Doc): void {
  const y = doc.y;
  doc.font('bold').fontSize(7.5).fillColor(muted);
  doc.text('PRODUCT', columns.product.x, y, { width: columns.product.width });
  for (const [key, label] of [
    ['quantity', 'QTY'],
    ['unitPrice', 'UNIT PRICE'],
    ['discount', 'DISCOUNT'],
    ['total', 'TOTAL'],
  ] as const) {
    doc.text(label, columns[key].x, y, { width: columns[key].width, align: 'right' });
  }
  doc
    .moveTo(page.margin, y + 11)
    .lineTo(right, y + 11)
    .lineWidth(0.8)
    .strokeColor(ink)
    .stroke();
  doc.y = y + 15;
}

/** Starts a new page when `height` more points would not fit. */
function room(doc: Doc, height: number, withHead: boolean): void {
  if (doc.y + height <= page.height - page.margin) return;
  doc.addPage();
  if (withHead) tableHead(doc);
}

function lineRow(doc: Doc, line: DocumentLine): void {
  doc.font('regular').fontSize(9);
  const productHeight =
    doc.heightOfString(line.product, { width: columns.product.width }) + (line.productId === null ? 0 : 11);
  room(doc, productHeight + 6, true);
  const y = doc.y;
  doc
    .font('regular')
    .fontSize(9)
    .fillColor(ink)
    .text(line.product, columns.product.x, y, { width: columns.product.width });
  if (line.productId !== null) {
    doc
      .fontSize(7.5)
      .fillColor(muted)
      .text(line.productId, columns.product.x, doc.y, { width: columns.product.width });
    doc.fontSize(9).fillColor(ink);
  }
  for (const key of ['quantity', 'unitPrice', 'discount', 'total'] as const) {
    doc.text(line[key], columns[key].x, y, { width: columns[key].width, align: 'right' });
  }
  const bottom = Math.max(y + productHeight, y + 11) + 3;
  doc.moveTo(page.margin, bottom).lineTo(right, bottom).lineWidth(0.4).strokeColor(rule).stroke();
  doc.y = bottom + 4;
}

/** The quote as a PDF, from the same model as the HTML page. */
export function renderQuotePdf(model: QuoteDocumentModel, createdAt: Date): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: page.margin,
    // Else pdfkit would load Helvetica's metrics for every document, and never use them.
    font: regular as unknown as string,
    bufferPages: false,
    // A fixed creation date makes the same quote the same bytes, and so the same ETag.
    info: { Title: model.heading, CreationDate: createdAt, Producer: 'cpq', Creator: 'cpq' },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.registerFont('regular', regular as unknown as Buffer);
  doc.registerFont('bold', bold as unknown as Buffer);
  if (model.draft) {
    watermark(doc);
    doc.on('pageAdded', () => watermark(doc));
  }

  doc.font('bold').fontSize(18).fillColor(ink).text(model.heading, page.margin, page.margin, { width: 330 });
  if (model.title !== null)
    doc.font('regular').fontSize(11).fillColor(muted).text(model.title, { width: 330 });
  const headBottom = doc.y;
  let factY = page.margin + 2;
  for (const fact of model.facts) {
    doc.font('regular').fontSize(8.5).fillColor(muted).text(fact.label, 390, factY, { width: 70 });
    doc.fillColor(ink).text(fact.value, 460, factY, { width: right - 460, align: 'right' });
    factY += 12;
  }
  doc.y = Math.max(headBottom, factY) + 6;
  doc.moveTo(page.margin, doc.y).lineTo(right, doc.y).lineWidth(1.5).strokeColor(ink).stroke();
  doc.y += 10;

  if (model.draft) {
    const y = doc.y;
    doc
      .rect(page.margin, y, right - page.margin, 20)
      .lineWidth(1.2)
      .strokeColor('#b42318')
      .stroke();
    doc.font('bold').fontSize(9).fillColor('#b42318');
    doc.text('DRAFT: not a binding offer until finalized', page.margin, y + 6, {
      width: right - page.margin,
      align: 'center',
      characterSpacing: 1.5,
    });
    doc.y = y + 30;
  }
  if (model.customer.length > 0) {
    doc
      .font('bold')
      .fontSize(7.5)
      .fillColor(muted)
      .text('PREPARED FOR', page.margin, doc.y, { characterSpacing: 1 });
    doc.font('regular').fontSize(10).fillColor(ink);
    for (const text of model.customer) doc.text(text, page.margin, doc.y, { width: 300 });
    doc.y += 12;
  }

  for (const group of model.groups) {
    room(doc, 60, false);
    doc
      .font('bold')
      .fontSize(12)
      .fillColor(ink)
      .text(group.name, page.margin, doc.y, { width: right - page.margin });
    if (group.name !== group.productId) {
      doc.font('regular').fontSize(8).fillColor(muted).text(group.productId, page.margin, doc.y);
    }
    doc.y += 4;
    tableHead(doc);
    for (const option of group.options) {
      room(doc, 36, true);
      const y = doc.y;
      doc
        .rect(page.margin, y - 2, right - page.margin, 15)
        .fillColor('#f2f4f7')
        .fill();
      doc
        .font('bold')
        .fontSize(9)
        .fillColor(ink)
        .text(option.name, page.margin + 4, y + 1, {
          width: right - page.margin - 8,
        });
      doc.y = y + 17;
      for (const line of option.lines) lineRow(doc, line);
    }
    doc.y += 10;
  }

  room(doc, 20 * model.totals.length + 10, false);
  for (const total of model.totals) {
    const y = doc.y;
    if (total.strong) {
      doc.moveTo(340, y).lineTo(right, y).lineWidth(1.5).strokeColor(ink).stroke();
      doc.y = y + 5;
    }
    doc
      .font(total.strong ? 'bold' : 'regular')
      .fontSize(total.strong ? 12 : 9.5)
      .fillColor(ink);
    const rowY = doc.y;
    doc.text(total.label, 340, rowY, { width: 100 });
    doc.text(total.value, 440, rowY, { width: right - 440, align: 'right' });
    doc.y = rowY + (total.strong ? 18 : 14);
  }
  if (model.notes !== null) {
    doc.y += 10;
    doc
      .font('regular')
      .fontSize(9.5)
      .fillColor(ink)
      .text(model.notes, page.margin, doc.y, { width: right - page.margin });
  }
  doc.end();
  return done;
}
